#include "store/write_tx.hpp"

#include "store/driver.hpp"
#include "store/error.hpp"
#include "store/store_metrics.hpp"

namespace plotq::store {

WriteTx::WriteTx(Db& db, std::string_view what) : db_(db), what_(what) {
  // A transaction already open on this connection: join it.
  if (db_.conn().in_transaction()) return;
  began_ = std::chrono::steady_clock::now();
  // Its rows are inserted or updated by key (ledger rows, a kept answer): no check spans rows, so on
  // PostgreSQL it takes no lock of the store's (sql.hpp's Tx).
  guarded("begin a write transaction", [&] { db_.conn().begin_write(std::string_view()); });
  own_ = true;
}

WriteTx::~WriteTx() {
  if (!own_ || done_) return;
  db_.conn().rollback();
}

void WriteTx::commit() {
  if (!own_ || done_) return;
  guarded("commit a write transaction", [&] { db_.conn().commit(); });
  done_ = true;
  observe_commit(what_, std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count());
}

}  // namespace plotq::store
