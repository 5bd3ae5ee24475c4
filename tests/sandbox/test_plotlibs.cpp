// The native engines of plot mode's libraries under the kernel layers alone (raw jobs: no guard, so
// nothing of sandbox/harness/plotlibs.py stands in the way): vl-convert's JavaScript engine
// fetches a spec's data URL, and lets-plot's native library draws a PNG, then the same process
// tries to reach the host. Each attack really runs (the job reports the library's own error or
// errno), and the host's loopback listener sees no connection, the marker an exec would write never
// appears (exec answers EPERM), a file on a hidden path stays unread. Warm and cold.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "fixture.hpp"

using namespace sbt;

namespace {

struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(fd, 8) == 0);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~Listener() { close(fd); }
  // No connection reached it (the kernel queues a completed handshake even if never accepted).
  bool untouched() const { return accept(fd, nullptr, nullptr) < 0 && errno == EAGAIN; }
};

std::string with_port(std::string prog, int port) {
  for (size_t p = prog.find("PORT"); p != std::string::npos; p = prog.find("PORT", p))
    prog.replace(p, 4, std::to_string(port));
  return prog;
}

}  // namespace

TEST_CASE("vl-convert's engine fetches a data URL: the host's loopback listener sees nothing", "[plotlibs]") {
  Listener net;
  // V8 reserves its virtual-memory cage at the first conversion: no finite RLIMIT_AS tried holds
  // it (sandbox/README.md, "Warm starts per library"); memory is the cgroup's to bound
  Sandbox box([](sb::Config& c) { c.rlimit_as_mb = 0; });
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    // allowed_base_urls left at vl-convert's default (any URL): only the kernel stands here
    std::string prog = with_port(R"(
import vl_convert as vlc
spec = {"data": {"url": "http://127.0.0.1:PORT/data.csv"}, "mark": "point",
        "encoding": {"x": {"field": "a", "type": "quantitative"}}}
try:
    vlc.vegalite_to_svg(spec)
    print("VL converted", flush=True)
except Exception as e:
    print("VL refused", type(e).__name__, str(e)[:300].replace("\n", " "), flush=True)
)", net.port);
    auto r = box.run(raw_job(prog, 60, cold));
    INFO(r.stdout_head << r.stderr_tail);
    CHECK(r.reason == sb::Reason::ok);
    // vl-convert either fails the fetch or draws the chart without its data: never the listener
    bool ran = r.stdout_head.find("VL refused") != std::string::npos ||
               r.stdout_head.find("VL converted") != std::string::npos;
    CHECK(ran);
    CHECK(net.untouched());
  }
}

TEST_CASE("lets-plot's native export runs; the same job still cannot exec, connect or read hidden paths", "[plotlibs]") {
  Listener net;
  Sandbox box;
  // /dev/shm (where the fixture's dir lives) is hidden inside jobs
  std::string secret = box.dir + "/secret.txt";
  { std::ofstream(secret) << "HOST-SECRET-4471"; }
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    std::string prog = with_port(R"(
import errno, os, socket
from lets_plot import aes, geom_point, ggplot, ggsize
from lets_plot.export import ggsave
plot = ggplot({"x": [1, 2, 3], "y": [3, 1, 2]}, aes("x", "y")) + geom_point() + ggsize(200, 120)
print("PNG", os.path.getsize(ggsave(plot, "p.png", path=".")), flush=True)
try:
    os.execv("/bin/sh", ["sh", "-c", "echo x > marker"])
except OSError as e:
    print("exec", errno.errorcode[e.errno], flush=True)
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=2)
    print("connect CONNECTED", flush=True)
except OSError as e:
    print("connect", errno.errorcode.get(e.errno, e.errno), flush=True)
try:
    print("read", open("SECRET").read(), flush=True)
except OSError as e:
    print("read", errno.errorcode[e.errno], flush=True)
)", net.port);
    for (size_t p = prog.find("SECRET\""); p != std::string::npos; p = prog.find("SECRET\"", p + 1))
      prog.replace(p, 6, secret);
    auto r = box.run(raw_job(prog, 90, cold));
    INFO(r.stdout_head << r.stderr_tail);
    CHECK(r.reason == sb::Reason::ok);
    CHECK_THAT(r.stdout_head, Catch::Contains("PNG "));
    CHECK_THAT(r.stdout_head, Catch::Contains("exec EPERM"));
    CHECK_THAT(r.stdout_head, Catch::Contains("connect EPERM"));
    CHECK_THAT(r.stdout_head, Catch::Contains("read ENOENT"));
    CHECK_THAT(r.stdout_head, !Catch::Contains("HOST-SECRET-4471"));
    CHECK(net.untouched());
  }
}
