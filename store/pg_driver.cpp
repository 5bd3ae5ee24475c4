// The PostgreSQL driver: one libpq connection, statements prepared once per connection (named
// p1, p2, ... by first use) and run with text parameters whose types the server infers, results
// read whole in text format. A connection found broken between transactions is reset before the
// next statement (at most once per backoff step, so a database that is down costs one failed
// connect per step, not one per call); one lost inside a transaction fails that transaction.
#include "store/pg_driver.hpp"

#include <libpq-fe.h>

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <functional>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "store/error.hpp"
#include "store/pg_sql.hpp"
#include "store/target.hpp"

namespace plotq::store::detail {
namespace {

// pg_advisory_xact_lock keys: 'pltq' in the high half.
constexpr long long kWriteLock = 0x706c747100000001LL;

using Clock = std::chrono::steady_clock;

// libpq quotes the part of a malformed conninfo or URI it could not read: that part may be a
// password, so it is cut from the message.
std::string scrubbed(std::string msg) {
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  if (msg.find("connection info string") == std::string::npos && msg.find("URI") == std::string::npos) return msg;
  std::string out;
  bool in = false;
  for (char ch : msg) {
    if (ch == '"') {
      out += in ? "...\"" : "\"";
      in = !in;
    } else if (!in) {
      out += ch;
    }
  }
  return out;
}


struct ResultFree {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultFree>;

[[noreturn]] void throw_result(PGconn* c, const PGresult* r, std::string_view what) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string msg = r ? PQresultErrorMessage(r) : PQerrorMessage(c);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  // No SQLSTATE and a broken connection: the server went away (08006 connection_failure).
  std::string code = state ? state : (!r || PQstatus(c) == CONNECTION_BAD ? "08006" : "XX000");
  throw PgError(code, std::string(what) + ": " + msg);
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

// One round trip with a deadline of our own: the query is sent, then the answer is waited for on
// the socket at most `limit`. statement_timeout ends a slow statement on a server that answers; a
// server that does not (frozen, or a network that drops packets without a word) would leave the
// worker blocked inside libpq for ever, so past the limit the connection is shut and the call fails
// as unreachable (the next call connects afresh). Null when no result came.
PGresult* round_trip(PGconn* c, const std::function<int()>& send, std::chrono::milliseconds limit) {
  if (!send()) return nullptr;
  const auto deadline = Clock::now() + limit;
  PGresult* last = nullptr;
  while (true) {
    while (PQisBusy(c)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        if (last) PQclear(last);
        // Shutting the socket makes the connection bad: libpq's state says so from now on.
        ::shutdown(PQsocket(c), SHUT_RDWR);
        PQconsumeInput(c);
        return nullptr;
      }
      pollfd p{PQsocket(c), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) break;
      if (!PQconsumeInput(c)) break;
    }
    PGresult* r = PQgetResult(c);
    if (!r) return last;
    if (last) PQclear(last);  // a script's answers: the last one says how it ended
    last = r;
    if (PQstatus(c) == CONNECTION_BAD) return last;
  }
  return last;
}

// One result of a pipeline (see PgConn::piped), waited for until `deadline` as round_trip waits.
// Null at the end of a command's results; `lost` is set when the connection broke or the deadline
// passed (the socket is then shut, so libpq says the connection is bad from now on).
PGresult* next_result(PGconn* c, Clock::time_point deadline, bool& lost) {
  while (PQisBusy(c)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      ::shutdown(PQsocket(c), SHUT_RDWR);
      PQconsumeInput(c);
      lost = true;
      return nullptr;
    }
    pollfd p{PQsocket(c), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) break;
    if (!PQconsumeInput(c)) break;
  }
  PGresult* r = PQgetResult(c);
  if (!r && PQstatus(c) == CONNECTION_BAD) lost = true;
  return r;
}

class PgConn;

class PgCursor final : public Cursor {
 public:
  PgCursor(PgConn& conn, std::string name, int params, const std::vector<int>& numbers)
      : conn_(conn), name_(std::move(name)), params_(params), numbers_(numbers) {}
  void bind_null(int i) override { bind_null_k(i); }
  void bind_int(int i, std::int64_t v) override { set(i, std::to_string(v), false); }
  void bind_real(int i, double v) override {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    set(i, buf, false);
  }
  void bind_text(int i, std::string_view v) override { set(i, std::string(v), false); }
  void bind_blob(int i, std::string_view v) override { set(i, std::string(v), true); }
  bool step() override {
    if (!res_) execute();
    if (row_ + 1 >= PQntuples(res_.get())) {
      row_ = PQntuples(res_.get());
      return false;
    }
    ++row_;
    return true;
  }
  std::int64_t run() override {
    if (!res_) execute();
    const char* n = PQcmdTuples(res_.get());
    return n && *n ? std::atoll(n) : 0;
  }
  void send() override;
  void reset() override {
    res_.reset();
    row_ = -1;
    values_.clear();
    binary_.clear();
  }
  int columns() const override { return res_ ? PQnfields(res_.get()) : 0; }
  bool is_null(int i) const override { return PQgetisnull(res_.get(), row_, i) != 0; }
  std::string text(int i) const override {
    return std::string(PQgetvalue(res_.get(), row_, i), static_cast<size_t>(PQgetlength(res_.get(), row_, i)));
  }
  std::int64_t int64(int i) const override {
    const char* v = PQgetvalue(res_.get(), row_, i);
    if (v[0] == 't' && v[1] == 0) return 1;  // a boolean expression: SQLite answers 1 / 0
    if (v[0] == 'f' && v[1] == 0) return 0;
    return std::strtoll(v, nullptr, 10);
  }
  double real(int i) const override { return std::strtod(PQgetvalue(res_.get(), row_, i), nullptr); }
  std::string blob(int i) const override {
    std::string t = text(i);
    if (t.rfind("\\x", 0) != 0) return t;
    std::string out;
    out.reserve((t.size() - 2) / 2);
    for (size_t k = 2; k + 1 < t.size(); k += 2) out += static_cast<char>(hexval(t[k]) * 16 + hexval(t[k + 1]));
    return out;
  }
  std::string name(int i) const override { return PQfname(res_.get(), i); }

 private:
  // The $K of SQLite's parameter i; 0 for one the text never uses (its binding is dropped, as
  // SQLite keeps a binding nothing reads).
  int number(int i) const {
    if (i < 1) throw PgError("42P02", "no parameter ?" + std::to_string(i));
    return size_t(i) < numbers_.size() ? numbers_[i] : 0;
  }
  std::optional<std::string>& slot(int k) {
    if (values_.size() < size_t(params_)) {
      values_.resize(params_);
      binary_.resize(params_, 0);
    }
    return values_[k - 1];
  }
  void bind_null_k(int i) {
    if (int k = number(i)) slot(k).reset();
  }
  void set(int i, std::string v, bool binary) {
    int k = number(i);
    if (k == 0) return;
    slot(k) = std::move(v);
    binary_[k - 1] = binary ? 1 : 0;
  }
  void execute();
  Result dispatch(bool wait);

  PgConn& conn_;
  std::string name_;
  int params_;
  std::vector<int> numbers_;  // [SQLite number] -> $K
  std::vector<std::optional<std::string>> values_;
  std::vector<int> binary_;
  Result res_;
  int row_ = -1;
};

class PgConn final : public Conn {
 public:
  PgConn(PGconn* c, const Options& o) : c_(c), options_(o) {}
  ~PgConn() override { PQfinish(c_); }
  Engine engine() const override { return Engine::postgresql; }

  std::unique_ptr<Cursor> prepare(std::string_view sql) override {
    ensure_connected();
    auto it = prepared_.find(sql);
    if (it == prepared_.end()) {
      PgSql pg = to_pg_placeholders(sql);
      std::string name = "p" + std::to_string(prepared_.size() + 1);
      Result r = command([&] { return PQsendPrepare(c_, name.c_str(), pg.text.c_str(), 0, nullptr); }, "prepare");
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) throw_result(c_, r.get(), "prepare");
      it = prepared_.emplace(std::string(sql), Prepared{name, pg.params, std::move(pg.pg_number)}).first;
    }
    return std::make_unique<PgCursor>(*this, it->second.name, it->second.params, it->second.numbers);
  }

  void exec_script(std::string_view sql) override {
    // A script is the simple protocol, which a pipeline does not carry: the transaction goes on
    // outside it.
    if (piping_) leave_pipe();
    ensure_connected();
    Result r(query(std::string(sql)));
    auto st = PQresultStatus(r.get());
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) throw_result(c_, r.get(), "exec");
  }
  bool in_transaction() override {
    return piping_ || (PQtransactionStatus(c_) != PQTRANS_IDLE && PQstatus(c_) == CONNECTION_OK);
  }
  // A write transaction runs in libpq's pipeline mode: BEGIN and the scope's lock go out with the
  // first statement that waits for an answer, and every Stmt::send with the next one, so a
  // transaction of n writes costs the round trips of its reads and its commit, not n + 2.
  void begin_write(std::optional<std::string_view> scope) override {
    ensure_connected();
    if (!PQenterPipelineMode(c_)) throw_result(c_, nullptr, "pipeline");
    piping_ = true;
    sent_ = 0;
    // A statement prepared here for the first time on this connection (a fresh one after a
    // reconnect) waits for its answer, and so reads the answers of what went before it: the
    // fence's refusal surfaces here. Tx and WriteTx begin in their constructors, and a constructor
    // that throws has no destructor to roll back: the failed transaction is ended here, or the
    // connection's next user (any statement, any transaction) runs inside it and fails 25P02.
    try {
      command([&] { return PQsendQueryParams(c_, "BEGIN", 0, nullptr, nullptr, nullptr, nullptr, 0); }, "begin", false);
      if (options_.fence) {
        if (std::int64_t epoch = options_.fence->epoch.load(); epoch > 0) {
          auto fence = prepare("SELECT plotq_fence(?, ?)");
          fence->bind_text(1, options_.fence->node);
          fence->bind_int(2, epoch);
          fence->send();
        }
      }
      if (!scope) {
        auto lock = prepare("SELECT pg_advisory_xact_lock(" + std::to_string(kWriteLock) + ")");
        return lock->send();
      }
      if (scope->empty()) return;
      // A scope's lock: its text hashed to the advisory lock's 64-bit key.
      auto lock = prepare("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))");
      lock->bind_text(1, *scope);
      lock->send();
    } catch (...) {
      rollback();
      throw;
    }
  }
  void commit() override {
    // COMMIT of a failed transaction answers ROLLBACK, not an error: that is a failed commit here.
    Result r = piping_ ? command([&] { return PQsendQueryParams(c_, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0); },
                                 "commit")
                       : Result(query("COMMIT"));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) throw_result(c_, r.get(), "commit");
    if (std::string_view(PQcmdStatus(r.get())) != "COMMIT")
      throw PgError("40000", "commit: the transaction had failed and was rolled back");
    if (piping_) leave_pipe();
  }
  void rollback() noexcept override {
    if (piping_) {
      try {
        if (sent_ > 0) sync_and_read(false);  // what is still in the pipe: its errors are this rollback's cause
      } catch (const std::exception&) {
      }
      piping_ = false;
      sent_ = 0;
      if (PQstatus(c_) != CONNECTION_OK || !PQexitPipelineMode(c_)) return;  // a bad connection is reset before its next use
    }
    if (PQstatus(c_) != CONNECTION_OK || PQtransactionStatus(c_) == PQTRANS_IDLE) return;
    PQclear(query("ROLLBACK"));
  }
  bool table_exists(std::string_view name) override {
    auto cur = prepare("SELECT to_regclass(?) IS NOT NULL");
    cur->bind_text(1, name);
    return cur->step() && cur->int64(0) == 1;
  }

  PGconn* raw() { return c_; }
  // statement_timeout, and a margin for the answer to come back.
  std::chrono::milliseconds limit() const { return std::chrono::milliseconds(options_.statement_timeout_ms + 3000); }
  PGresult* query(const std::string& sql) {
    return round_trip(c_, [&] { return PQsendQuery(c_, sql.c_str()); }, limit());
  }
  bool piping() const { return piping_; }

  // One extended-protocol command. Outside a pipeline: one round trip, its result. In one
  // (a write transaction): sent; when `wait`, a sync follows and every answer up to it is read,
  // the first error among the commands sent before it raised, and its own result returned; when
  // not, it waits in the pipe (null), at most kMaxUnread of them, so the answers stay far below
  // what a socket buffers and neither side can block on a full one.
  Result command(const std::function<int()>& send, std::string_view what, bool wait = true) {
    if (!piping_) {
      Result r(round_trip(c_, send, limit()));
      if (!r) throw_result(c_, nullptr, what);
      return r;
    }
    if (!send()) throw_result(c_, nullptr, what);
    ++sent_;
    if (!wait && sent_ < kMaxUnread) return nullptr;
    return sync_and_read(wait);
  }

  // Ends the pipeline with the transaction still open (a script follows, or the commit came).
  void leave_pipe() {
    if (sent_ > 0) sync_and_read(false);
    piping_ = false;
    if (!PQexitPipelineMode(c_)) throw_result(c_, nullptr, "pipeline");
  }
  void lost() {
    // Statements prepared on the old session are gone with it.
    if (PQstatus(c_) == CONNECTION_BAD) prepared_.clear();
  }

  // Called before every statement outside a transaction: a broken session is reset (bounded:
  // one attempt per backoff step, doubling from 100 ms to 5 s).
  void ensure_connected() {
    if (PQstatus(c_) == CONNECTION_OK) return;
    prepared_.clear();
    auto now = Clock::now();
    if (now < next_try_) throw PgError("08006", "the database is unreachable (retrying after a backoff)");
    PQreset(c_);
    if (PQstatus(c_) != CONNECTION_OK) {
      backoff_ = std::min(backoff_ * 2, std::chrono::milliseconds(5000));
      next_try_ = now + backoff_;
      throw PgError("08006", "reconnect: " + scrubbed(PQerrorMessage(c_)));
    }
    backoff_ = std::chrono::milliseconds(50);
    set_session(c_, options_);
  }

  static void set_session(PGconn* c, const Options& o) {
    std::string sql = "SET TIME ZONE 'UTC'; SET statement_timeout = " + std::to_string(o.statement_timeout_ms) +
                      "; SET lock_timeout = " + std::to_string(o.lock_timeout_ms) +
                      "; SET idle_in_transaction_session_timeout = " +
                      std::to_string(o.idle_in_transaction_ms > 0 ? o.idle_in_transaction_ms
                                                                  : std::max(o.statement_timeout_ms, 1000) * 6) +
                      // The server's NOTICEs (CREATE TABLE IF NOT EXISTS ... skipping) are not
                      // ours to print on plotq's stderr.
                      "; SET client_min_messages = warning";
    // A read-only open (the CLI's listings and checks), as SQLite's read-only file: no write goes.
    if (o.read_only) sql += "; SET default_transaction_read_only = on";
    Result r(PQexec(c, sql.c_str()));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) throw_result(c, r.get(), "session settings");
  }

 private:
  struct Prepared {
    std::string name;
    int params;
    std::vector<int> numbers;
  };
  // Syncs and reads the answers of the sent_ commands; returns the last one's when `last` (the
  // command that waits), throws the first error.
  Result sync_and_read(bool last) {
    int n = sent_;
    sent_ = 0;
    if (!PQpipelineSync(c_)) {
      lost();
      throw_result(c_, nullptr, "pipeline sync");
    }
    const auto deadline = Clock::now() + limit();
    bool gone = false;
    Result first_error, own;
    for (int k = 0; k < n && !gone; ++k) {
      // One command's answers end with a null.
      while (PGresult* r = next_result(c_, deadline, gone)) {
        auto st = PQresultStatus(r);
        if (st == PGRES_FATAL_ERROR && !first_error) first_error.reset(r);
        else if (k == n - 1 && last) own.reset(r);
        else PQclear(r);
      }
    }
    if (!gone) {
      Result sync(next_result(c_, deadline, gone));
      if (!gone && PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC) {
        // Not the answer the protocol promises: the connection is not to be trusted again.
        ::shutdown(PQsocket(c_), SHUT_RDWR);
        PQconsumeInput(c_);
        gone = true;
      }
    }
    if (gone) {
      piping_ = false;
      lost();
      throw PgError("08006", "the connection was lost in the middle of a transaction");
    }
    if (first_error) throw_result(c_, first_error.get(), "statement");
    return own;
  }

  static constexpr int kMaxUnread = 256;
  PGconn* c_;
  Options options_;
  bool piping_ = false;
  int sent_ = 0;  // commands in the pipe whose answers are not read yet
  std::map<std::string, Prepared, std::less<>> prepared_;
  std::chrono::milliseconds backoff_{50};
  Clock::time_point next_try_{};
};

// Sends the statement with its bindings; waits for its answer when `wait` (see PgConn::command).
Result PgCursor::dispatch(bool wait) {
  if (values_.size() < size_t(params_)) {
    values_.resize(params_);
    binary_.resize(params_, 0);
  }
  std::vector<const char*> vals(params_);
  std::vector<int> lens(params_);
  for (int k = 0; k < params_; ++k) {
    vals[k] = values_[k] ? values_[k]->data() : nullptr;
    lens[k] = values_[k] ? static_cast<int>(values_[k]->size()) : 0;
  }
  PGconn* c = conn_.raw();
  try {
    // libpq copies the values into its buffer as it sends: they need not outlive this call.
    return conn_.command(
        [&] { return PQsendQueryPrepared(c, name_.c_str(), params_, vals.data(), lens.data(), binary_.data(), 0); },
        "statement", wait);
  } catch (...) {
    conn_.lost();
    throw;
  }
}

void PgCursor::execute() {
  res_ = dispatch(true);
  auto st = PQresultStatus(res_.get());
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    Result failed = std::move(res_);
    conn_.lost();
    throw_result(conn_.raw(), failed.get(), "statement");
  }
  row_ = -1;
}

void PgCursor::send() {
  if (!conn_.piping()) return execute();
  dispatch(false);  // its answer is read, and its error raised, with the next command that waits
}

}  // namespace

PGconn* pg_open(const std::string& target, const Options& o) {
  // Ours first, the target after it (expand_dbname): a connect_timeout or application_name the
  // operator wrote wins.
  std::string timeout = std::to_string(o.connect_timeout_s);
  const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* vals[] = {timeout.c_str(), "plotq", target.c_str(), nullptr};
  PGconn* c = PQconnectdbParams(keys, vals, 1);
  if (!c) throw StoreError("unreachable", "cannot allocate a PostgreSQL connection");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = scrubbed(PQerrorMessage(c));
    PQfinish(c);
    // The server answered and refused us (authentication, no such database): not a fault that
    // passes by itself.
    bool refused = msg.find("authentication") != std::string::npos || msg.find("does not exist") != std::string::npos ||
                   msg.find("password") != std::string::npos || msg.find("invalid") != std::string::npos;
    throw StoreError(refused ? "db_open" : "unreachable", "cannot connect to " + redacted(target) + ": " + msg);
  }
  try {
    PgConn::set_session(c, o);
  } catch (const PgError& e) {
    PQfinish(c);
    throw StoreError("db_open", std::string("cannot set up the session: ") + e.what());
  }
  return c;
}

std::unique_ptr<Conn> pg_connect(const std::string& target, const Options& o) {
  return std::make_unique<PgConn>(pg_open(target, o), o);
}

}  // namespace plotq::store::detail
