// One write transaction that composes: a repository call that writes several rows opens a WriteTx,
// and a caller that must store two things together (a run's ledger row and the answer kept for its
// retries) opens one around both calls. The inner WriteTx then joins the outer one: its commit()
// does nothing and the outer commits or rolls back everything. BEGIN IMMEDIATE, so a writer takes
// the write lock at the start and never fails a read-to-write upgrade half-way.
// An own transaction is timed, BEGIN to the end of COMMIT, as plotq_store_commit_seconds{what}
// (store/store_metrics.hpp names the labels).
#pragma once
#include <chrono>
#include <string_view>

#include "store/db.hpp"

namespace plotq::store {

class WriteTx {
 public:
  // Throws StoreError when BEGIN fails (busy past the busy timeout, io). `what` must outlive the
  // transaction (a literal of store_metrics.hpp's labels).
  WriteTx(Db& db, std::string_view what);
  ~WriteTx();  // rolls back an own transaction that was not committed
  WriteTx(const WriteTx&) = delete;
  WriteTx& operator=(const WriteTx&) = delete;

  // Commits an own transaction (throws StoreError: busy, disk_full, io); a joined one is
  // committed by its owner.
  void commit();
  bool joined() const { return !own_; }

 private:
  Db& db_;
  std::string_view what_;
  std::chrono::steady_clock::time_point began_;
  bool own_ = false;
  bool done_ = false;
};

}  // namespace plotq::store
