#include "store/write_tx.hpp"

#include <sqlite3.h>

#include "store/error.hpp"

namespace plotq::store {

WriteTx::WriteTx(Db& db) : db_(db) {
  // Autocommit off means a transaction is already open on this connection: join it.
  if (sqlite3_get_autocommit(db_.sql().getHandle()) == 0) return;
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
}

}  // namespace plotq::store
