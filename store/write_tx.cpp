#include "store/write_tx.hpp"

#include <sqlite3.h>

#include "store/error.hpp"
#include "store/store_metrics.hpp"

namespace plotq::store {

WriteTx::WriteTx(Db& db, std::string_view what) : db_(db), what_(what) {
  // Autocommit off means a transaction is already open on this connection: join it.
  if (sqlite3_get_autocommit(db_.sql().getHandle()) == 0) return;
  began_ = std::chrono::steady_clock::now();
  guarded("begin a write transaction", [&] { db_.sql().exec("BEGIN IMMEDIATE"); });
  own_ = true;
}

WriteTx::~WriteTx() {
  if (!own_ || done_) return;
  // SQLite may have rolled back by itself (SQLITE_FULL, SQLITE_IOERR); only an open one is ended.
  if (sqlite3_get_autocommit(db_.sql().getHandle()) == 0) sqlite3_exec(db_.sql().getHandle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTx::commit() {
  if (!own_ || done_) return;
  guarded("commit a write transaction", [&] { db_.sql().exec("COMMIT"); });
  done_ = true;
  observe_commit(what_, std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count());
}

}  // namespace plotq::store
