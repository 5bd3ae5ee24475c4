#include "tests/support/test_client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace plotq::test {
namespace {

using Clock = std::chrono::steady_clock;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<Ms>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

void split_lines(std::string& partial, const char* data, std::size_t n, std::vector<std::string>& out) {
  partial.append(data, n);
  std::size_t start = 0, nl;
  while ((nl = partial.find('\n', start)) != std::string::npos) {
    out.push_back(partial.substr(start, nl - start));
    start = nl + 1;
  }
  partial.erase(0, start);
}

}  // namespace

// ---- TempDir ----

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/plotq-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

// ---- Plotqd ----

Plotqd::Plotqd(std::string binary, Env env, std::vector<std::string> args, bool wait) {
  // Build the child's environment before fork (no allocation after fork).
  Env full = {{"PLOTQ_LISTEN", "127.0.0.1:0"}, {"PLOTQ_LOG_REQUESTS", "1"}};
  for (auto& kv : env) {
    bool replaced = false;
    for (auto& f : full)
      if (f.first == kv.first) {
        f.second = kv.second;
        replaced = true;
      }
    if (!replaced) full.push_back(kv);
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "PLOTQ_", 6) != 0) env_strings.emplace_back(*e);
  for (auto& [k, v] : full) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{binary};
  for (auto& a : args) argv_strings.push_back(a);
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  if (pipe2(wake_, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  thread_ = std::thread([this] { reader(); });
  if (wait && !wait_listening()) {
    stop();
    std::string log;
    for (auto& l : stderr_lines()) log += l + "\n";
    throw std::runtime_error("plotqd did not start listening; stderr:\n" + log);
  }
}

void Plotqd::stop() {
  // SIGTERM first: a plotqd that shuts down removes its private dirs (plotq-render-*, the figure
  // renderer's); SIGKILL only when it does not exit in time. SIGTERM drains (running work gets
  // PLOTQ_SHUTDOWN_GRACE_S): a teardown sends a second one after 1 s, which skips the rest of it.
  if (!exit_code_) {
    ::kill(pid_, SIGTERM);
    if (!wait_exit(1s)) ::kill(pid_, SIGTERM);
    if (!wait_exit(5s)) {
      ::kill(pid_, SIGKILL);
      wait_exit(10s);
    }
  }
  if (thread_.joinable()) {
    // Give the reader a moment to drain what the child wrote last, then wake it.
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, 2s, [this] { return pipes_closed_; });
    }
    if (write(wake_[1], "x", 1) < 0) {
    }
    thread_.join();
  }
  for (int* fd : {&out_fd_, &err_fd_, &wake_[0], &wake_[1]})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
}

Plotqd::~Plotqd() { stop(); }

void Plotqd::reader() {
  std::string out_partial, err_partial;
  bool out_open = true, err_open = true;
  char buf[4096];
  while (out_open || err_open) {
    pollfd fds[3] = {{out_open ? out_fd_ : -1, POLLIN, 0}, {err_open ? err_fd_ : -1, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents) break;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      std::lock_guard lock(mu_);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
        std::string& partial = i == 0 ? out_partial : err_partial;
        if (!partial.empty()) (i == 0 ? out_lines_ : err_lines_).push_back(partial);
        partial.clear();
      } else if (i == 0) {
        split_lines(out_partial, buf, static_cast<std::size_t>(n), out_lines_);
      } else {
        split_lines(err_partial, buf, static_cast<std::size_t>(n), err_lines_);
      }
      cv_.notify_all();
    }
  }
  std::lock_guard lock(mu_);
  pipes_closed_ = true;
  cv_.notify_all();
}

bool Plotqd::wait_listening(Ms timeout) {
  auto ev = wait_log("listening", timeout);
  if (!ev || !(*ev)["address"].is_string()) return false;
  address_ = (*ev)["address"].get<std::string>();
  port_ = static_cast<std::uint16_t>(std::stoi(address_.substr(address_.rfind(':') + 1)));
  return true;
}

std::vector<std::string> Plotqd::stderr_lines() const {
  std::lock_guard lock(mu_);
  return err_lines_;
}

std::vector<std::string> Plotqd::stdout_lines() const {
  std::lock_guard lock(mu_);
  return out_lines_;
}

std::vector<nlohmann::json> Plotqd::log_events(std::string_view event) const {
  std::vector<nlohmann::json> out;
  for (const auto& line : stderr_lines()) {
    if (line.empty() || line[0] != '{') continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (!event.empty() && (!j.contains("event") || j["event"] != event)) continue;
    out.push_back(std::move(j));
  }
  return out;
}

std::optional<nlohmann::json> Plotqd::wait_log(std::string_view event, Ms timeout,
                                               std::function<bool(const nlohmann::json&)> pred) {
  auto deadline = Clock::now() + timeout;
  std::size_t seen = 0;
  std::unique_lock lock(mu_);
  while (true) {
    for (; seen < err_lines_.size(); ++seen) {
      const std::string& line = err_lines_[seen];
      if (line.empty() || line[0] != '{') continue;
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("event") || j["event"] != event) continue;
      if (!pred || pred(j)) return j;
    }
    if (pipes_closed_) return std::nullopt;
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && seen == err_lines_.size()) return std::nullopt;
  }
}

void Plotqd::signal(int sig) {
  if (!exit_code_) ::kill(pid_, sig);
}

std::optional<int> Plotqd::wait_exit(Ms timeout) {
  if (exit_code_) return exit_code_;
  auto deadline = Clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      // The child is gone, but what it wrote last may still be in the pipes: let the reader reach
      // their end (briefly: a process it left may hold them), so that stdout_lines() after an exit
      // has every line (plotqd --routes was once read as empty).
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, 2s, [this] { return pipes_closed_; });
      return exit_code_;
    }
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(5ms);
  }
}

bool poll_until(const std::function<bool()>& cond, Ms timeout, Ms pace) {
  for (auto deadline = Clock::now() + timeout;; std::this_thread::sleep_for(pace)) {
    if (cond()) return true;
    if (Clock::now() >= deadline) return false;
  }
}

bool wait_job_file(const std::string& runs_dir, const std::string& name, Ms timeout) {
  return poll_until(
      [&] {
        std::error_code ec;
        for (std::filesystem::directory_iterator it(runs_dir, ec), end; !ec && it != end; it.increment(ec))
          if (it->path().filename().string().rfind("job-", 0) == 0 &&
              (name.empty() || std::filesystem::exists(it->path() / name, ec)))
            return true;
        return false;
      },
      timeout);
}

bool wait_in_flight(std::uint16_t port, int n, Ms timeout) {
  return poll_until([&] { return http_request(port, "GET", "/status").json().value("in_flight", -1) == n; }, timeout);
}

// ---- HTTP ----

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return v;
  return std::nullopt;
}

nlohmann::json HttpResponse::json() const { return nlohmann::json::parse(body); }

Connection::Connection(std::uint16_t port, const std::string& host) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) throw std::runtime_error("bad host " + host);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    int e = errno;
    close(fd_);
    fd_ = -1;
    throw std::runtime_error(std::string("connect failed: ") + std::strerror(e));
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Connection::~Connection() {
  if (fd_ >= 0) close(fd_);
}

Connection::Connection(Connection&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)), closed_(o.closed_) { o.fd_ = -1; }

bool Connection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void Connection::shutdown_write() { ::shutdown(fd_, SHUT_WR); }

// Reads more into buf_; false on timeout or close.
bool Connection::fill(Ms, Clock::time_point deadline) {
  if (closed_) return false;
  pollfd p{fd_, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, ms_left(deadline));
  } while (r < 0 && errno == EINTR);
  if (r <= 0) return false;
  char tmp[16384];
  ssize_t n = recv(fd_, tmp, sizeof tmp, 0);
  if (n <= 0) {
    closed_ = true;
    return false;
  }
  buf_.append(tmp, static_cast<std::size_t>(n));
  return true;
}

std::size_t Connection::read_some(std::string& out, Ms timeout) {
  if (!buf_.empty()) {
    std::size_t n = buf_.size();
    out += buf_;
    buf_.clear();
    return n;
  }
  if (!fill(timeout, Clock::now() + timeout)) return 0;
  std::size_t n = buf_.size();
  out += buf_;
  buf_.clear();
  return n;
}

bool Connection::wait_closed(Ms timeout) {
  auto deadline = Clock::now() + timeout;
  buf_.clear();
  while (!closed_) {
    if (Clock::now() >= deadline) return false;
    if (!fill(timeout, deadline) && !closed_) return false;
    buf_.clear();
  }
  return true;
}

std::optional<HttpResponse> Connection::read_head(Ms timeout) {
  auto deadline = Clock::now() + timeout;
  std::size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos)
    if (!fill(timeout, deadline)) return std::nullopt;
  std::string head = buf_.substr(0, end + 2);
  buf_.erase(0, end + 4);
  HttpResponse r;
  std::size_t line_end = head.find("\r\n");
  std::string status_line = head.substr(0, line_end);
  // "HTTP/1.1 200 OK"
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) return std::nullopt;
  r.status = std::stoi(status_line.substr(9, 3));
  r.reason = status_line.size() > 13 ? status_line.substr(13) : "";
  std::size_t pos = line_end + 2;
  while (pos < head.size()) {
    std::size_t e = head.find("\r\n", pos);
    std::string line = head.substr(pos, e - pos);
    pos = e + 2;
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    while (!v.empty() && v.front() == ' ') v.erase(0, 1);
    r.headers.emplace_back(line.substr(0, colon), v);
  }
  return r;
}

std::optional<HttpResponse> Connection::read_response(Ms timeout) {
  auto deadline = Clock::now() + timeout;
  auto r = read_head(timeout);
  if (!r) return std::nullopt;
  while (r->status >= 100 && r->status < 200) {  // 100 Continue: the real answer follows
    r = read_head(Ms(ms_left(deadline)));
    if (!r) return std::nullopt;
  }
  if (auto cl = r->header("Content-Length")) {
    std::size_t n = std::stoul(*cl);
    while (buf_.size() < n)
      if (!fill(timeout, deadline)) return std::nullopt;
    r->body = buf_.substr(0, n);
    buf_.erase(0, n);
  } else if (auto te = r->header("Transfer-Encoding"); te && iequals(*te, "chunked")) {
    while (true) {
      std::size_t e;
      while ((e = buf_.find("\r\n")) == std::string::npos)
        if (!fill(timeout, deadline)) return std::nullopt;
      std::size_t n = std::stoul(buf_.substr(0, e), nullptr, 16);
      while (buf_.size() < e + 2 + n + 2)
        if (!fill(timeout, deadline)) return std::nullopt;
      r->body += buf_.substr(e + 2, n);
      buf_.erase(0, e + 2 + n + 2);
      if (n == 0) break;
    }
  } else {
    while (fill(timeout, deadline)) {
    }
    if (!closed_) return std::nullopt;  // timed out before the close that ends the body
    r->body = std::move(buf_);
    buf_.clear();
  }
  return r;
}

std::string format_request(std::string_view method, std::string_view target, std::string_view body,
                           const HeaderList& headers, bool keep_alive) {
  std::string s;
  s.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  bool has_length = false;
  for (const auto& [k, v] : headers) {
    s += k + ": " + v + "\r\n";
    has_length = has_length || iequals(k, "Content-Length") || iequals(k, "Transfer-Encoding");
  }
  if (!has_length && (!body.empty() || method == "POST" || method == "PUT"))
    s += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (!keep_alive) s += "Connection: close\r\n";
  s += "\r\n";
  s.append(body);
  return s;
}

HttpResponse http_request(std::uint16_t port, std::string_view method, std::string_view target, std::string_view body,
                          const HeaderList& headers, Ms timeout) {
  Connection c(port);
  if (!c.send(format_request(method, target, body, headers, false))) throw std::runtime_error("send failed");
  auto r = c.read_response(timeout);
  if (!r) throw std::runtime_error("no response to " + std::string(method) + " " + std::string(target));
  return *r;
}

// ---- SSE ----

std::vector<SseFrame> parse_sse(std::string& text) {
  std::vector<SseFrame> frames;
  SseFrame cur;
  bool any = false;
  std::size_t consumed = 0, pos = 0;
  bool first_data = true;
  while (true) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (any) frames.push_back(std::move(cur));
      cur = SseFrame{};
      any = false;
      first_data = true;
      consumed = pos;
      continue;
    }
    any = true;
    std::size_t colon = line.find(':');
    std::string field = line.substr(0, colon);
    std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    if (field.empty()) cur.comments.push_back(value);
    else if (field == "id") {
      cur.id = value;
      cur.has_id = true;
    } else if (field == "event") cur.event = value;
    else if (field == "data") {
      if (!first_data) cur.data += '\n';
      cur.data += value;
      first_data = false;
    } else if (field == "retry") {
      try {
        cur.retry = std::stol(value);
      } catch (...) {
      }
    }
  }
  text.erase(0, consumed);
  return frames;
}

SseStream::SseStream(std::uint16_t port, std::string_view method, std::string_view target, std::string_view body,
                     const HeaderList& headers, Ms timeout)
    : conn_(port) {
  HeaderList h = headers;
  h.emplace_back("Accept", "text/event-stream");
  if (!conn_.send(format_request(method, target, body, h, true))) throw std::runtime_error("send failed");
  auto r = conn_.read_head(timeout);
  if (!r) throw std::runtime_error("no response head for " + std::string(target));
  head_ = *r;
}

std::optional<SseFrame> SseStream::next(Ms timeout) {
  auto deadline = Clock::now() + timeout;
  std::vector<SseFrame> frames;
  while (true) {
    // parse_sse consumes whole frames only; take the first and keep the text of the rest.
    std::size_t end = pending_.find("\n\n");
    std::size_t end_crlf = pending_.find("\r\n\r\n");
    if (end != std::string::npos || end_crlf != std::string::npos) {
      std::size_t cut = std::min(end == std::string::npos ? std::string::npos : end + 2,
                                 end_crlf == std::string::npos ? std::string::npos : end_crlf + 4);
      std::string one = pending_.substr(0, cut);
      pending_.erase(0, cut);
      auto f = parse_sse(one);
      if (!f.empty()) return f.front();
      continue;  // a blank line with nothing before it
    }
    if (ended_) return std::nullopt;
    int left = ms_left(deadline);
    if (left <= 0) return std::nullopt;
    std::size_t n = conn_.read_some(pending_, Ms(left));
    if (n == 0 && conn_.closed()) ended_ = true;
  }
}

std::optional<SseFrame> SseStream::next_event(Ms timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    auto f = next(Ms(ms_left(deadline)));
    if (!f) return std::nullopt;
    if (!f->event.empty() || !f->data.empty() || f->has_id) return f;
  }
}

}  // namespace plotq::test
