// FigureRenderer against the real renderer: Node, playwright-core, Debian's Chromium and the
// runtime's own plotly.js and BokehJS. Fixtures are plotly 7 figures and bokeh 3.9 json_items
// written by the runtime (tests/figure/make_figures.py).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <algorithm>
#include <string>
#include <vector>

#include "common/env.hpp"
#include "common/log.hpp"
#include "sandbox/figure_renderer.hpp"

namespace fs = std::filesystem;
namespace asio = boost::asio;
using plotq::sandbox::FigureConfig;
using plotq::sandbox::FigureRenderer;
using plotq::sandbox::FigureResult;

namespace {

const fs::path kFixtures = fs::path(PLOTQ_FIGURE_TEST_DIR) / "fixtures";

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "plotq-figure-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

FigureConfig test_config() {
  FigureConfig c = plotq::sandbox::figure_config_from_env();
  if (::geteuid() != 0) c.figure_netns = c.figure_pidns = false;  // new namespaces need root
  // Generous: a start (launch, warm-up, two fresh pages) takes ~3 s idle but 15 s on a loaded CI box.
  c.figure_start_timeout_s = 120;
  return c;
}

// Runs the io_context until the render's callback has run.
FigureResult render(asio::io_context& io, FigureRenderer& r, const fs::path& figure, const fs::path& out,
                    double timeout_s = 120, const std::string& library = "") {
  std::optional<FigureResult> got;
  r.render(figure.string(), out.string(), timeout_s, [&](FigureResult res) { got = std::move(res); }, library);
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (!got && std::chrono::steady_clock::now() < give_up) {
    if (io.stopped()) io.restart();  // an earlier answer may have left it out of work
    io.run_one_for(std::chrono::milliseconds(100));
  }
  REQUIRE(got.has_value());
  return *got;
}

void run_for(asio::io_context& io, std::chrono::milliseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) io.run_one_for(std::chrono::milliseconds(20));
}

// The PNG's size from its IHDR chunk, read without following links.
std::pair<int, int> png_size(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  REQUIRE(fd >= 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  REQUIRE(S_ISREG(st.st_mode));
  unsigned char h[24];
  REQUIRE(::read(fd, h, sizeof h) == 24);
  ::close(fd);
  const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  REQUIRE(std::equal(sig, sig + 8, h));
  REQUIRE(std::string(reinterpret_cast<char*>(h + 12), 4) == "IHDR");
  auto be = [&](int o) { return (h[o] << 24) | (h[o + 1] << 16) | (h[o + 2] << 8) | h[o + 3]; };
  return {be(16), be(20)};
}

void write_file(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
  REQUIRE(f.good());
}

struct ProcEntry {
  pid_t pid;
  std::string start_time;  // field 22 of /proc/<pid>/stat: tells a reused pid apart
};

// Reads (ppid, starttime) of a live process; false when it is gone or a zombie.
bool proc_stat(pid_t pid, pid_t& ppid, std::string& start_time) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  auto rp = line.rfind(')');
  if (rp == std::string::npos) return false;
  std::istringstream rest(line.substr(rp + 2));
  std::vector<std::string> fields;
  for (std::string x; rest >> x;) fields.push_back(x);
  if (fields.size() < 20 || fields[0] == "Z") return false;
  ppid = static_cast<pid_t>(std::stol(fields[1]));
  start_time = fields[19];
  return true;
}

// The renderer and every process below it (node, the launcher, Chromium and its helpers).
std::vector<ProcEntry> descendants(pid_t root) {
  std::vector<std::pair<pid_t, ProcEntry>> all;  // (ppid, entry)
  DIR* d = ::opendir("/proc");
  if (!d) return {};
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    pid_t ppid = 0;
    std::string st;
    if (proc_stat(static_cast<pid_t>(pid), ppid, st)) all.push_back({ppid, {static_cast<pid_t>(pid), st}});
  }
  ::closedir(d);
  std::vector<ProcEntry> out;
  pid_t ppid0 = 0;
  std::string st0;
  if (!proc_stat(root, ppid0, st0)) return out;
  out.push_back({root, st0});
  for (std::size_t i = 0; i < out.size(); ++i)
    for (const auto& [ppid, entry] : all)
      if (ppid == out[i].pid) out.push_back(entry);
  return out;
}

bool still_alive(const ProcEntry& e) {
  pid_t ppid = 0;
  std::string st;
  return proc_stat(e.pid, ppid, st) && st == e.start_time;
}

uid_t proc_uid(pid_t pid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return static_cast<uid_t>(-1);
  return st.st_uid;
}

}  // namespace

TEST_CASE("figure settings come from PLOTQ_ variables and bad values are refused") {
  ::setenv("PLOTQ_FIGURE_RESTART_AFTER", "7", 1);
  ::setenv("PLOTQ_CHROMIUM", "/opt/chromium", 1);
  ::setenv("PLOTQ_FIGURE_NETNS", "0", 1);
  FigureConfig c = plotq::sandbox::figure_config_from_env();
  CHECK(c.figure_restart_after == 7);
  CHECK(c.chromium == "/opt/chromium");
  CHECK_FALSE(c.figure_netns);
  // The runtime's own JavaScript, never Debian's python3-plotly.
  CHECK(c.plotly_js == plotq::sandbox::runtime_plotly_js());
  CHECK(c.plotly_js.find("/runtime/venv/lib/python3.") != std::string::npos);
  CHECK(fs::is_regular_file(c.plotly_js));
  CHECK(fs::is_regular_file(c.bokeh_js + "/bokeh.min.js"));
  ::setenv("PLOTQ_FIGURE_RESTART_AFTER", "0", 1);
  CHECK_THROWS_AS(plotq::sandbox::figure_config_from_env(), plotq::ConfigError);
  ::setenv("PLOTQ_FIGURE_RESTART_AFTER", "many", 1);
  CHECK_THROWS_AS(plotq::sandbox::figure_config_from_env(), plotq::ConfigError);
  for (const char* n : {"PLOTQ_FIGURE_RESTART_AFTER", "PLOTQ_CHROMIUM", "PLOTQ_FIGURE_NETNS"}) ::unsetenv(n);
}

TEST_CASE("a machine without Chromium answers runtime_unavailable and starts nothing") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  FigureConfig c = test_config();
  c.chromium = "/nonexistent/chromium";
  FigureRenderer r(io, c);
  CHECK_FALSE(r.available());
  CHECK(r.unavailable_reason().find("chromium") != std::string::npos);
  TempDir dir;
  FigureResult res = render(io, r, kFixtures / "scatter-light.json", dir.path / "plot-light.png");
  CHECK_FALSE(res.ok);
  CHECK(res.code == "runtime_unavailable");
  CHECK(r.starts() == 0);
  CHECK_FALSE(r.ready());
  CHECK_FALSE(fs::exists(dir.path / "plot-light.png"));
}

TEST_CASE("plotly scatter and subplot figures, light and dark, come out at the exact canvas size") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  FigureRenderer r(io, test_config());
  REQUIRE(r.available());
  CHECK_FALSE(r.ready());  // nothing started yet
  TempDir dir;
  struct Case {
    const char* fixture;
    int w, h;
  };
  for (Case c : {Case{"scatter-light", 3200, 1800}, Case{"scatter-dark", 3200, 1800}, Case{"subplot-light", 3200, 1800},
                 Case{"subplot-dark", 3200, 1800}, Case{"square", 2400, 2400}}) {
    INFO(c.fixture);
    fs::path out = dir.path / (std::string(c.fixture) + ".png");
    FigureResult res = render(io, r, kFixtures / (std::string(c.fixture) + ".json"), out);
    INFO(res.code << " " << res.detail);
    REQUIRE(res.ok);
    CHECK(res.width == c.w);
    CHECK(res.height == c.h);
    CHECK(png_size(out) == std::make_pair(c.w, c.h));
    CHECK(res.bytes == fs::file_size(out));
    CHECK(res.blocked_requests == 0);
    CHECK(res.csp_violations == 0);
  }
  CHECK(r.starts() == 1);  // one warm renderer served all five
  CHECK(r.ready());
}

TEST_CASE("bokeh plots, light, dark, square and a layout, come out at the exact canvas size") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  FigureRenderer r(io, test_config());
  REQUIRE(r.available("bokeh"));
  TempDir dir;
  struct Case {
    const char* fixture;
    const char* library;  // as the job names it ("": the shape says)
    int w, h;
  };
  for (Case c : {Case{"bokeh-light", "bokeh", 3200, 1800}, Case{"bokeh-dark", "bokeh", 3200, 1800},
                 Case{"bokeh-square", "", 2400, 2400}, Case{"bokeh-column", "", 3200, 1800},
                 Case{"scatter-light", "plotly", 3200, 1800}}) {
    INFO(c.fixture);
    fs::path out = dir.path / (std::string(c.fixture) + ".png");
    FigureResult res = render(io, r, kFixtures / (std::string(c.fixture) + ".json"), out, 120, c.library);
    INFO(res.code << " " << res.detail);
    REQUIRE(res.ok);
    CHECK(res.library == (std::string(c.fixture).rfind("bokeh", 0) == 0 ? "bokeh" : "plotly"));
    CHECK(png_size(out) == std::make_pair(c.w, c.h));
    CHECK(res.blocked_requests == 0);
    CHECK(res.csp_violations == 0);
  }
  // A job that names its library gets a figure of that library's shape, or figure_invalid.
  FigureResult wrong = render(io, r, kFixtures / "bokeh-light.json", dir.path / "wrong.png", 120, "plotly");
  CHECK(wrong.code == "figure_invalid");
  FigureResult wrong2 = render(io, r, kFixtures / "scatter-light.json", dir.path / "wrong2.png", 120, "bokeh");
  CHECK(wrong2.code == "figure_invalid");
  CHECK_FALSE(fs::exists(dir.path / "wrong.png"));
  CHECK(r.starts() == 1);
}

TEST_CASE("hostile bokeh: CustomJS and markup handlers do not run and reach no listener") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const std::string url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  int connections = 0;
  std::function<void()> accept = [&] {
    acceptor.async_accept([&](const boost::system::error_code& ec, asio::ip::tcp::socket) {
      if (ec) return;
      ++connections;
      accept();
    });
  };
  accept();
  // The fixture's CustomJS (on document ready and on a range change) and its Div's onerror and
  // <script> would fetch MARKER/...: point them at the listener.
  std::ifstream in(kFixtures / "bokeh-hostile.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(text.find("MARKER") != std::string::npos);
  for (std::size_t at; (at = text.find("MARKER")) != std::string::npos;) text.replace(at, 6, url);
  TempDir dir;
  write_file(dir.path / "hostile.json", text);
  FigureRenderer r(io, test_config());
  FigureResult res = render(io, r, dir.path / "hostile.json", dir.path / "hostile.png", 120, "bokeh");
  INFO(res.code << " " << res.detail);
  REQUIRE(res.ok);  // the plot draws; the code around it does not run
  CHECK(png_size(dir.path / "hostile.png") == std::make_pair(3200, 1800));
  CHECK(res.csp_violations >= 2);  // the policy refused the CustomJS eval and the inline handler
  run_for(io, std::chrono::milliseconds(500));
  CHECK(connections == 0);
}

TEST_CASE("a renderer without BokehJS draws plotly and answers bokeh jobs runtime_unavailable") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  FigureConfig c = test_config();
  c.bokeh_js = "";
  FigureRenderer r(io, c);
  CHECK(r.available());
  CHECK(r.available("plotly"));
  CHECK_FALSE(r.available("bokeh"));
  CHECK_FALSE(r.available("altair"));
  TempDir dir;
  FigureResult named = render(io, r, kFixtures / "bokeh-light.json", dir.path / "a.png", 120, "bokeh");
  CHECK(named.code == "runtime_unavailable");
  CHECK(r.starts() == 0);  // refused before anything started
  // Unnamed, the renderer itself finds the shape is bokeh's and that it has no BokehJS.
  FigureResult unnamed = render(io, r, kFixtures / "bokeh-light.json", dir.path / "b.png");
  CHECK(unnamed.code == "library_unavailable");
  FigureResult plotly = render(io, r, kFixtures / "scatter-dark.json", dir.path / "c.png", 120, "plotly");
  CHECK(plotly.ok);
  CHECK_FALSE(fs::exists(dir.path / "a.png"));
  CHECK_FALSE(fs::exists(dir.path / "b.png"));
}

TEST_CASE("bad figures are refused with their own code, write no PNG, and leave the renderer up") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  FigureRenderer r(io, test_config());
  TempDir dir;
  const fs::path& d = dir.path;
  write_file(d / "empty.json", "");
  write_file(d / "invalid.json", "{\"data\": [");
  write_file(d / "array.json", "[1, 2, 3]");
  write_file(d / "nodata.json", "{\"layout\": {}}");
  write_file(d / "extra.json", "{\"data\": [], \"script\": \"alert(1)\"}");
  write_file(d / "badwidth.json", "{\"data\": [], \"layout\": {\"width\": \"wide\"}}");
  write_file(d / "hugewidth.json", "{\"data\": [], \"layout\": {\"width\": 100000}}");
  write_file(d / "proto.json", "{\"data\": [{\"__proto__\": {\"polluted\": 1}}]}");
  write_file(d / "bomb.json", std::string(200000, '[') + std::string(200000, ']'));
  {
    // 17 MiB, sparse: refused from fstat's size before anything is read.
    int fd = ::open((d / "huge.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, 17 << 20) == 0);
    ::close(fd);
  }
  fs::copy_file(kFixtures / "scatter-light.json", d / "real.json");
  fs::create_symlink(d / "real.json", d / "link.json");
  REQUIRE(::mkfifo((d / "fifo.json").c_str(), 0644) == 0);
  fs::create_directory(d / "dir.json");

  struct Case {
    std::string file, code;
  };
  std::vector<Case> cases = {
      {"empty.json", "figure_empty"},         {"invalid.json", "figure_invalid"},
      {"array.json", "figure_invalid"},       {"nodata.json", "figure_invalid"},
      {"extra.json", "figure_invalid"},       {"badwidth.json", "figure_size_invalid"},
      {"hugewidth.json", "figure_size_invalid"}, {"proto.json", "figure_invalid"},
      {"bomb.json", "figure_too_deep"},       {"huge.json", "figure_too_large"},
      {"link.json", "figure_not_regular"},    {"fifo.json", "figure_not_regular"},
      {"dir.json", "figure_not_regular"},     {"missing.json", "figure_missing"},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    fs::path out = d / (c.file + ".png");
    FigureResult res = render(io, r, d / c.file, out);
    CHECK_FALSE(res.ok);
    CHECK(res.code == c.code);
    CHECK_FALSE(fs::exists(out));
  }
  // A relative path never reaches the file system.
  FigureResult rel = render(io, r, "real.json", d / "rel.png");
  CHECK(rel.code == "request_invalid");

  // The same renderer still draws a real figure afterwards; the link's target is drawable.
  FigureResult ok = render(io, r, d / "real.json", d / "real.png");
  INFO(ok.code << " " << ok.detail);
  CHECK(ok.ok);
  CHECK(png_size(d / "real.png") == std::make_pair(3200, 1800));
  CHECK(r.starts() == 1);
}

TEST_CASE("hostile figures: scripts in text and annotations do not run, an external image is not fetched") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  // A local listener that must see no connection.
  asio::ip::tcp::acceptor acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const int port = acceptor.local_endpoint().port();
  int connections = 0;
  std::function<void()> accept = [&] {
    acceptor.async_accept([&](const boost::system::error_code& ec, asio::ip::tcp::socket) {
      if (ec) return;
      ++connections;
      accept();
    });
  };
  accept();

  FigureRenderer r(io, test_config());
  TempDir dir;
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const std::string js = "fetch('" + url + "/script');document.title='pwned'";
  const std::string script_fig =
      R"({"data": [{"type": "scatter", "x": [1, 2], "y": [1, 2], "mode": "markers+text",
           "name": "<script>)" + js + R"(</script>", "text": ["<img src=x onerror=\")" + js + R"(\">", "b"]}],
          "layout": {"title": {"text": "<script>)" + js + R"(</script>Title"},
                     "annotations": [{"x": 1, "y": 1, "text": "<script>)" + js + R"(</script><a href=\"javascript:)" + js + R"(\">a</a>"}]}})";
  const std::string image_fig =
      R"({"data": [{"type": "scatter", "x": [1, 2], "y": [1, 2]}],
          "layout": {"images": [{"source": ")" + url + R"(/image.png", "xref": "paper", "yref": "paper",
                                 "x": 0, "y": 1, "sizex": 0.5, "sizey": 0.5}]}})";
  write_file(dir.path / "script.json", script_fig);
  write_file(dir.path / "image.json", image_fig);

  FigureResult s = render(io, r, dir.path / "script.json", dir.path / "script.png");
  INFO(s.code << " " << s.detail);
  REQUIRE(s.ok);  // drawn, with the markup as text
  CHECK(png_size(dir.path / "script.png") == std::make_pair(3200, 1800));

  FigureResult i = render(io, r, dir.path / "image.json", dir.path / "image.png");
  INFO(i.code << " " << i.detail);
  REQUIRE(i.ok);
  CHECK(i.csp_violations >= 1);  // the page tried to load the image and its policy refused it

  run_for(io, std::chrono::milliseconds(300));
  CHECK(connections == 0);
}

TEST_CASE("a renderer that stops answering is killed with its whole group, and crashes and restarts recover") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  FigureConfig c = test_config();
  c.figure_kill_grace_s = 0.5;
  c.figure_restart_after = 2;
  FigureRenderer r(io, c);
  TempDir dir;
  const fs::path fig = kFixtures / "scatter-light.json";

  FigureResult first = render(io, r, fig, dir.path / "1.png");
  INFO(first.code << " " << first.detail);
  REQUIRE(first.ok);
  pid_t pid = r.renderer_pid();
  REQUIRE(pid > 0);
  std::vector<ProcEntry> tree = descendants(pid);
  CHECK(tree.size() > 3);  // node, the launcher's Chromium and its helpers

  if (c.figure_netns) {
    auto ns = [](const std::string& p) { return fs::read_symlink(p).string(); };
    CHECK(ns("/proc/" + std::to_string(pid) + "/ns/net") != ns("/proc/self/ns/net"));
  }
  if (::geteuid() == 0) {
    int as_figure_uid = 0;
    for (const ProcEntry& e : tree)
      if (proc_uid(e.pid) == c.figure_uid) ++as_figure_uid;
    CHECK(as_figure_uid >= 2);  // Chromium's processes run as figure_uid, not root
  }

  // Second job: after it the renderer is replaced (restart_after = 2), eagerly.
  FigureResult second = render(io, r, fig, dir.path / "2.png");
  INFO("second: " << second.code << " " << second.detail);
  REQUIRE(second.ok);
  CHECK(r.starts() == 2);

  // A renderer that cannot answer (stopped) is killed at timeout + grace, with all it started.
  FigureResult warm = render(io, r, fig, dir.path / "3.png");
  INFO("warm: " << warm.code << " " << warm.detail);
  REQUIRE(warm.ok);
  pid = r.renderer_pid();
  REQUIRE(pid > 0);
  tree = descendants(pid);
  REQUIRE(tree.size() > 3);
  REQUIRE(::kill(pid, SIGSTOP) == 0);
  FigureResult stuck = render(io, r, fig, dir.path / "4.png", 1.0);
  INFO("stuck: " << stuck.code << " " << stuck.detail << " after " << stuck.wall_s << " s");
  CHECK_FALSE(stuck.ok);
  CHECK(stuck.code == "timeout");
  CHECK(stuck.wall_s >= 1.0);
  CHECK_FALSE(fs::exists(dir.path / "4.png"));
  bool all_gone = false;
  for (int i = 0; i < 200 && !all_gone; ++i) {  // up to 10 s: the kernel kills the namespace
    run_for(io, std::chrono::milliseconds(50));
    all_gone = std::none_of(tree.begin(), tree.end(), still_alive);
  }
  CHECK(all_gone);  // Chromium included, though Playwright starts it in a session of its own

  // The next job gets a fresh renderer.
  FigureResult after = render(io, r, fig, dir.path / "5.png");
  INFO(after.code << " " << after.detail);
  CHECK(after.ok);
  const auto starts_before_crash = r.starts();

  // A renderer that dies just before a job arrives: the job is tried once more on a fresh one.
  pid = r.renderer_pid();
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  FigureResult crashed = render(io, r, fig, dir.path / "6.png");
  INFO(crashed.code << " " << crashed.detail);
  CHECK(crashed.ok);
  CHECK(r.starts() > starts_before_crash);
}

TEST_CASE("a full queue answers busy and stop() answers the waiting jobs with shutdown") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  FigureConfig c = test_config();
  c.figure_max_queue = 0;  // nothing may wait behind the job in hand
  FigureRenderer r(io, c);
  TempDir dir;
  std::vector<FigureResult> got;
  for (int i = 0; i < 2; ++i)
    r.render((kFixtures / "scatter-light.json").string(), (dir.path / (std::to_string(i) + ".png")).string(), 30,
             [&](FigureResult res) { got.push_back(std::move(res)); });
  r.stop();
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (got.size() < 2 && std::chrono::steady_clock::now() < give_up) io.run_one_for(std::chrono::milliseconds(50));
  REQUIRE(got.size() == 2);
  // Callbacks run in order of answer: the second was refused at once, the first when stop() ran.
  CHECK(got[0].code == "busy");
  CHECK(got[1].code == "shutdown");
  CHECK_FALSE(fs::exists(dir.path / "0.png"));
  FigureResult after = render(io, r, kFixtures / "scatter-light.json", dir.path / "2.png");
  CHECK(after.code == "shutdown");
}

namespace {
FigureResult render_snippet(asio::io_context& io, FigureRenderer& r, const fs::path& snippet, const fs::path& out,
                            plotq::sandbox::SnippetJob how, double timeout_s = 60) {
  std::optional<FigureResult> got;
  r.render_snippet(snippet.string(), out.string(), std::move(how), timeout_s, [&](FigureResult res) { got = std::move(res); });
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (!got && std::chrono::steady_clock::now() < give_up) {
    if (io.stopped()) io.restart();
    io.run_one_for(std::chrono::milliseconds(100));
  }
  REQUIRE(got.has_value());
  return *got;
}
}  // namespace

TEST_CASE("JavaScript snippets through the host: exact sizes and an endless loop is a timeout the renderer survives") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  FigureRenderer r(io, test_config());
  for (const char* lib : {"chartjs", "d3", "echarts", "highcharts", "muix"}) {
    INFO(lib << ": " << r.unavailable_reason(lib));
    REQUIRE(r.available(lib));
  }
  CHECK_FALSE(r.available("vega"));
  TempDir dir;
  const fs::path cat = fs::path(PLOTQ_FIGURE_TEST_DIR) / ".." / "catalogue" / "plots";
  const fs::path square = cat / "heatmap-square" / "implementations" / "javascript" / "echarts.js";
  FigureResult a = render_snippet(io, r, square, dir.path / "a.png", {"echarts", "dark", false});
  INFO(a.code << " " << a.detail);
  REQUIRE(a.ok);
  CHECK(png_size(dir.path / "a.png") == std::make_pair(2400, 2400));
  CHECK(a.library == "echarts");
  const auto starts = r.starts();

  // while (true) {}: the page never yields. The renderer closes the job's context at the deadline and
  // answers timeout itself (no host kill, no restart); the next snippet draws.
  write_file(dir.path / "loop.js", "const t = window.ANYPLOT_TOKENS;\nwhile (true) {}\n");
  FigureResult loop = render_snippet(io, r, dir.path / "loop.js", dir.path / "loop.png", {"chartjs", "light", false}, 3);
  INFO(loop.code << " " << loop.detail << " after " << loop.wall_s << " s");
  CHECK(loop.code == "timeout");
  CHECK(loop.wall_s < 3 + 2 + 1);  // within the timeout and the host's kill grace
  CHECK_FALSE(fs::exists(dir.path / "loop.png"));
  const fs::path bar = cat / "bar-basic" / "implementations" / "javascript" / "chartjs.js";
  FigureResult b = render_snippet(io, r, bar, dir.path / "b.png", {"chartjs", "light", false});
  INFO(b.code << " " << b.detail);
  CHECK(b.ok);
  CHECK(png_size(dir.path / "b.png") == std::make_pair(3200, 1800));
  CHECK(r.starts() == starts);  // the same renderer served all three

  // A snippet's own error comes back with its class and line.
  write_file(dir.path / "bad.js", "const t = window.ANYPLOT_TOKENS;\n\nnull.x;\n");
  FigureResult bad = render_snippet(io, r, dir.path / "bad.js", dir.path / "bad.png", {"d3", "light", false});
  CHECK(bad.code == "snippet_error");
  CHECK(bad.error_class == std::optional<std::string>("TypeError"));
  CHECK(bad.error_line == std::optional<int>(3));
}

// The finding of issue 33, through the host as plotqd runs it (run twice by ctest: with the network
// namespace, and as figure.hostile_no_netns with PLOTQ_FIGURE_NETNS=0, where the page and the
// browser's flags alone must hold): a snippet whose RTCPeerConnection aims ICE (STUN, TURN over UDP
// and TCP) at a listener on TCP and UDP, 127.0.0.1 and ::1. The page's prelude has removed the
// API, so the attack line throws (its class and line come back: the line ran) and nothing arrives.
TEST_CASE("hostile snippet: WebRTC at a listener on TCP and UDP, 127.0.0.1 and ::1, throws at its line and reaches nothing") {
  plotq::set_log_enabled(false);
  asio::io_context io;
  int hits = 0;
  asio::ip::tcp::acceptor tcp4(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const unsigned short port = tcp4.local_endpoint().port();
  asio::ip::tcp::acceptor tcp6(io);
  tcp6.open(asio::ip::tcp::v6());
  tcp6.set_option(asio::ip::v6_only(true));
  tcp6.bind(asio::ip::tcp::endpoint(asio::ip::make_address("::1"), port));
  tcp6.listen();
  asio::ip::udp::socket udp4(io, asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::ip::udp::socket udp6(io);
  udp6.open(asio::ip::udp::v6());
  udp6.set_option(asio::ip::v6_only(true));
  udp6.bind(asio::ip::udp::endpoint(asio::ip::make_address("::1"), port));
  std::function<void(asio::ip::tcp::acceptor&)> accept = [&](asio::ip::tcp::acceptor& a) {
    a.async_accept([&](const boost::system::error_code& ec, asio::ip::tcp::socket) {
      if (ec) return;
      ++hits;
      accept(a);
    });
  };
  char buf[2048];
  asio::ip::udp::endpoint from;
  std::function<void(asio::ip::udp::socket&)> receive = [&](asio::ip::udp::socket& s) {
    s.async_receive_from(asio::buffer(buf), from, [&](const boost::system::error_code& ec, std::size_t) {
      if (ec) return;
      ++hits;
      receive(s);
    });
  };
  accept(tcp4);
  accept(tcp6);
  receive(udp4);
  receive(udp6);

  const std::string P = std::to_string(port);
  const std::string ice = "{ iceServers: [{ urls: ['stun:127.0.0.1:" + P + "', 'stun:[::1]:" + P + "'] }, { urls: ['turn:127.0.0.1:" + P +
                          "?transport=udp', 'turn:127.0.0.1:" + P + "?transport=tcp', 'turn:[::1]:" + P + "?transport=udp', 'turn:[::1]:" + P +
                          "?transport=tcp'], username: 'u', credential: 'p' }] }";
  TempDir dir;
  FigureRenderer r(io, test_config());
  // Line 3 is the attack, in the page's own global and in a fresh iframe's.
  for (const std::string realm : {"window", "document.body.appendChild(document.createElement('iframe')).contentWindow"}) {
    write_file(dir.path / "rtc.js", "const t = window.ANYPLOT_TOKENS;\nconst W = " + realm + ";\nconst pc = new W.RTCPeerConnection(" + ice +
                                        ");\npc.createDataChannel('x');\npc.createOffer().then((o) => pc.setLocalDescription(o));\n");
    FigureResult res = render_snippet(io, r, dir.path / "rtc.js", dir.path / "rtc.png", {"d3", "light", false});
    INFO(realm << ": " << res.code << " " << res.detail);
    CHECK(res.code == "snippet_error");
    CHECK(res.error_class == std::optional<std::string>("TypeError"));
    CHECK(res.error_line == std::optional<int>(3));
  }
  run_for(io, std::chrono::milliseconds(1500));
  CHECK(hits == 0);
}
