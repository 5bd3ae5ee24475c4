#include "store/hints.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>

#include "store/error.hpp"
#include "store/pg_driver.hpp"

namespace plotq::store {
namespace {

struct Result {
  PGresult* r;
  ~Result() { PQclear(r); }
};

// One command on the idle connection; its error as StoreError unreachable (a hint is never worth
// more: the caller reconnects and polls meanwhile).
Result command(PGconn* c, const char* sql, int n = 0, const char* const* params = nullptr) {
  Result r{PQexecParams(c, sql, n, nullptr, params, nullptr, nullptr, 0)};
  auto st = PQresultStatus(r.r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    throw StoreError("unreachable", std::string("cluster hints: ") + PQerrorMessage(c));
  return r;
}

}  // namespace

std::unique_ptr<Hints> Hints::open(const std::string& target, const Options& o) {
  std::unique_ptr<Hints> h(new Hints(detail::pg_open(target, o)));
  Result schema = command(h->c_, "SELECT current_schema()");
  h->channel_ = std::string("plotq hints ") + (PQgetisnull(schema.r, 0, 0) ? "public" : PQgetvalue(schema.r, 0, 0));
  char* quoted = PQescapeIdentifier(h->c_, h->channel_.c_str(), h->channel_.size());
  if (!quoted) throw StoreError("unreachable", "cluster hints: cannot quote the channel");
  std::string listen = std::string("LISTEN ") + quoted;
  PQfreemem(quoted);
  command(h->c_, listen.c_str());
  return h;
}

Hints::~Hints() { PQfinish(c_); }

std::vector<std::string> Hints::wait(int wake_fd, std::chrono::milliseconds timeout) {
  std::vector<std::string> got;
  auto drain = [&] {
    if (!PQconsumeInput(c_)) throw StoreError("unreachable", std::string("cluster hints: ") + PQerrorMessage(c_));
    const int self = PQbackendPID(c_);
    while (PGnotify* n = PQnotifies(c_)) {
      if (n->be_pid != self) got.emplace_back(n->extra ? n->extra : "");
      PQfreemem(n);
    }
  };
  drain();  // what arrived with the last command's answer
  if (!got.empty()) return got;
  pollfd fds[2] = {{PQsocket(c_), POLLIN, 0}, {wake_fd, POLLIN, 0}};
  if (fds[0].fd < 0) throw StoreError("unreachable", "cluster hints: no connection");
  int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (n > 0 && (fds[0].revents & (POLLIN | POLLERR | POLLHUP))) drain();
  return got;
}

void Hints::send(const std::string& payload) {
  // Sent and read without blocking past a bound: a link that went dead must not hold the thread
  // (nor a shutdown that joins it) for TCP's retransmission timeout.
  const char* params[] = {channel_.c_str(), payload.c_str()};
  auto lost = [&](const char* what) { throw StoreError("unreachable", std::string("cluster hints: ") + what); };
  if (!PQsendQueryParams(c_, "SELECT pg_notify($1, $2)", 2, nullptr, params, nullptr, nullptr, 0)) lost(PQerrorMessage(c_));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    int flushed = PQflush(c_);
    if (flushed < 0) lost(PQerrorMessage(c_));
    if (flushed == 0 && !PQisBusy(c_)) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) lost("no answer in time");
    pollfd fd{PQsocket(c_), static_cast<short>(POLLIN | (flushed == 1 ? POLLOUT : 0)), 0};
    if (::poll(&fd, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) lost("poll failed");
    if (!PQconsumeInput(c_)) lost(PQerrorMessage(c_));
  }
  bool ok = true;
  while (PGresult* r = PQgetResult(c_)) {
    ok = ok && PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
  }
  if (!ok) lost(PQerrorMessage(c_));
}

}  // namespace plotq::store
