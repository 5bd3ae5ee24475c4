#include "sweep/bare.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/env.hpp"
#include "sandbox/output.hpp"

extern char** environ;

namespace plotq::runs {
namespace {

using Clock = std::chrono::steady_clock;

// Bare mode's runner for figure-mode libraries (plotly, bokeh): the harness's own capture module
// (sandbox/harness/figurecapture.py, the same one figure mode installs, with no guard) writes the
// figure's JSON to plot-<theme>.json at write_image/show/save/export_png, then plot.py runs as
// __main__. argv[1] is the harness dir; it leaves sys.path again before the file runs, so the plot
// imports what it would without the shim.
const char* kShim = R"PY(import os
import runpy
import sys

sys.path.insert(0, sys.argv[1])
import figurecapture

sys.path.remove(sys.argv[1])
with open("plot.py", encoding="utf-8") as _f:
    figurecapture.install("plot-%s.json" % os.environ.get("ANYPLOT_THEME", "light"), source=_f.read())
sys.argv = ["plot.py"]
runpy.run_path("plot.py", run_name="__main__")
)PY";

// Prints {printed name: vocabulary name} for every class the harness can name.
const char* kVocabularyScript = R"PY(
import json, sys
sys.path.insert(0, sys.argv[1])
import errors
classes, names = errors.build_class_table()
out = {}
for c in classes:
    mod = getattr(c, "__module__", None)
    qn = c.__qualname__
    if mod in ("builtins", "__main__"):
        printed = qn
    else:
        printed = "%s.%s" % (mod if isinstance(mod, str) else "<unknown>", qn)
    out.setdefault(printed, names[id(c)])
print(json.dumps(out))
)PY";

bool write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  return static_cast<bool>(out);
}

// The child's environment: ours without Python/plotq/anyplot settings, plus the run's.
std::vector<std::string> child_env(const std::string& theme) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (kv.rfind("PYTHON", 0) == 0 || kv.rfind("PLOTQ_", 0) == 0 || kv.rfind("ANYPLOT_", 0) == 0 ||
        kv.rfind("MPLBACKEND=", 0) == 0)
      continue;
    env.emplace_back(kv);
  }
  env.push_back("ANYPLOT_THEME=" + theme);
  env.push_back("MPLBACKEND=Agg");
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct Spawned {
  pid_t pid = -1;
  int out_fd = -1;  // read end of the captured stream
  std::string error;
};

// posix_spawn: thread-safe (the runner may have several bare jobs in flight). `capture_fd` (1 or
// 2) goes to a pipe; the other of stdout/stderr and stdin go to /dev/null. Own process group,
// default signal dispositions, empty mask, no inherited descriptors.
Spawned spawn_captured(std::vector<std::string> argv, std::vector<std::string> env, const std::string& cwd,
                       int capture_fd) {
  Spawned s;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    s.error = std::string("pipe: ") + std::strerror(errno);
    return s;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, capture_fd == 1 ? 2 : 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, p[1], capture_fd);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&at, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  auto a = c_strings(argv);
  auto e = c_strings(env);
  int rc = ::posix_spawn(&s.pid, argv[0].c_str(), &fa, &at, a.data(), e.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  ::close(p[1]);
  if (rc != 0) {
    ::close(p[0]);
    s.pid = -1;
    s.error = std::string("spawn ") + argv[0] + ": " + std::strerror(rc);
    return s;
  }
  s.out_fd = p[0];
  return s;
}

struct Waited {
  bool reaped = false;
  int status = 0;
  rusage usage{};
  bool timed_out = false;
  bool cancelled = false;
  std::string tail;
  double wall_s = 0;
};

// Reads the pipe (keeping the last `keep` bytes) until the child exited and the pipe closed;
// kills the whole group at the deadline or on stop, and after the child exited (leftovers).
Waited wait_child(const Spawned& s, Clock::time_point start, double timeout_s, std::size_t keep,
                  const std::atomic<bool>* stop) {
  Waited w;
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  bool eof = false, killed = false;
  Clock::time_point reaped_at{};
  char buf[16384];
  while (!(w.reaped && eof)) {
    if (!eof) {
      pollfd pfd{s.out_fd, POLLIN, 0};
      int n = ::poll(&pfd, 1, 50);
      if (n > 0) {
        ssize_t r = ::read(s.out_fd, buf, sizeof buf);
        if (r > 0) {
          w.tail.append(buf, static_cast<std::size_t>(r));
          if (w.tail.size() > 2 * keep) w.tail.erase(0, w.tail.size() - keep);
        } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
          eof = true;
        }
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!w.reaped) {
      pid_t r = ::wait4(s.pid, &w.status, WNOHANG, &w.usage);
      if (r == s.pid) {
        w.reaped = true;
        reaped_at = Clock::now();
        w.wall_s = std::chrono::duration<double>(reaped_at - start).count();
        ::kill(-s.pid, SIGKILL);  // whatever the program left running in its group
      }
    }
    auto now = Clock::now();
    if (!w.reaped && !killed && now >= deadline) {
      w.timed_out = true;
      killed = true;
      ::kill(-s.pid, SIGKILL);
    }
    if (!w.reaped && !killed && stop && stop->load()) {
      w.cancelled = true;
      killed = true;
      ::kill(-s.pid, SIGKILL);
    }
    // A descendant that left the group may hold the pipe: stop reading 2 s after the exit.
    if (w.reaped && !eof && now - reaped_at > std::chrono::seconds(2)) eof = true;
  }
  ::close(s.out_fd);
  if (w.tail.size() > keep) w.tail.erase(0, w.tail.size() - keep);
  return w;
}

// A fresh run dir under the sweep's temp root (run.dir), or run.host_error.
bool make_run_dir(const BareConfig& config, BareRun& run) {
  std::string tmpl = config.sweep_tmp_root + "/plotq-sweep-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    run.host_error = std::string("mkdtemp: ") + std::strerror(errno);
    return false;
  }
  run.dir = tmpl;
  return true;
}

// Waits for a spawned bare run (Python's or R's) and fills in what the host saw of it.
BareRun finish_run(BareRun run, const Spawned& s, Clock::time_point start, double timeout_s, std::size_t keep,
                   const std::atomic<bool>& stop) {
  if (s.pid < 0) {
    run.host_error = s.error;
    return run;
  }
  Waited w = wait_child(s, start, timeout_s, keep, &stop);
  run.timed_out = w.timed_out;
  run.cancelled = w.cancelled;
  run.wall_s = w.wall_s;
  run.cpu_s = static_cast<double>(w.usage.ru_utime.tv_sec + w.usage.ru_stime.tv_sec) +
              static_cast<double>(w.usage.ru_utime.tv_usec + w.usage.ru_stime.tv_usec) / 1e6;
  run.max_rss_mb = static_cast<double>(w.usage.ru_maxrss) / 1024.0;
  if (WIFEXITED(w.status)) run.exit_code = WEXITSTATUS(w.status);
  if (WIFSIGNALED(w.status)) run.signal = WTERMSIG(w.status);
  run.stderr_tail = std::move(w.tail);
  return run;
}

}  // namespace


const char* bare_figure_shim() { return kShim; }

void remove_run_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

BareRun run_bare_python(const BareConfig& config, const std::string& source, const std::string& data_csv,
                        const std::string& theme, bool plotly_shim, double timeout_s,
                        const std::atomic<bool>& stop) {
  BareRun run;
  if (!make_run_dir(config, run)) return run;
  bool ok = write_file(run.dir + "/plot.py", source);
  if (ok && !data_csv.empty()) ok = write_file(run.dir + "/data.csv", data_csv);
  if (ok && plotly_shim) ok = write_file(run.dir + "/plotq_bare_shim.py", kShim);
  if (!ok) {
    run.host_error = "cannot write the run dir";
    return run;
  }
  std::vector<std::string> argv = {config.python, plotly_shim ? "plotq_bare_shim.py" : "plot.py"};
  if (plotly_shim)
    argv.push_back(config.harness_dir.empty() ? project_home() + "/sandbox/harness" : config.harness_dir);
  auto start = Clock::now();
  Spawned s = spawn_captured(argv, child_env(theme), run.dir, 2);
  return finish_run(std::move(run), s, start, timeout_s, config.sweep_stderr_keep_bytes, stop);
}

std::optional<std::string> read_output(const std::string& dir, const std::string& name, std::size_t cap,
                                       Outcome& reason) {
  sandbox::OutputRead r = sandbox::read_file(dir + "/" + name, cap);
  switch (r.status) {
    case sandbox::OutputRead::ok: return std::move(r.data);
    case sandbox::OutputRead::missing: reason = Outcome::no_output; break;
    case sandbox::OutputRead::too_large: reason = Outcome::output_too_large; break;
    default: reason = Outcome::output_rejected; break;  // a link, a FIFO, a directory, a read error
  }
  return std::nullopt;
}

void classify_png(const std::string& png, store::SweepResult& row, bool exact_canvas) {
  auto size = png_size(png);
  if (!size) {
    set_failure(row, Outcome::output_rejected);
    row.detail = "not a PNG";
    return;
  }
  row.width = size->first;
  row.height = size->second;
  if (exact_canvas && !canvas_ok(size->first, size->second)) {
    set_failure(row, Outcome::canvas_size);
    row.detail = describe_size(size->first, size->second);
    return;
  }
  row.outcome = store::SweepOutcome::render;
  row.reason = "ok";
  row.error_class.reset();
  row.png_bytes = static_cast<std::int64_t>(png.size());
  row.canvas = canvas_of(size->first, size->second);
}

void classify_bare(const BareConfig& config, const BareRun& run, const ClassVocabulary& classes,
                   const std::string& png_name, store::SweepResult& row, std::string* png_out) {
  row.exit_code = run.exit_code;
  row.signal = run.signal;
  set_measures(row, run.wall_s, run.cpu_s, run.max_rss_mb);
  if (!run.host_error.empty()) return set_failure(row, Outcome::io);
  if (run.timed_out) return set_failure(row, Outcome::timeout);
  if (run.signal) return set_failure(row, Outcome::crashed);
  if (run.exit_code.value_or(1) != 0) {
    // An R run names its condition's class itself (run_bare_r); R classes are not Python's vocabulary.
    if (auto r_class = r_error_class(run.stderr_tail)) return set_failure(row, Outcome::plot_error, *r_class);
    auto printed = traceback_class(run.stderr_tail);
    if (printed) return set_failure(row, Outcome::plot_error, classes.classify(*printed));
    // No traceback: the program ended itself with a status (sys.exit(3), sys.exit("text"),
    // os._exit(3)), which plot mode reports as plot_exit.
    return set_failure(row, Outcome::plot_exit);
  }
  Outcome reason = Outcome::ok;
  auto png = read_output(run.dir, png_name, config.max_png_bytes, reason);
  if (!png) return set_failure(row, reason);
  classify_png(*png, row);
  if (png_out && row.outcome == store::SweepOutcome::render) *png_out = std::move(*png);
}

namespace {
// The bare R runner: plot.R's expressions evaluated in the global environment (what Rscript does
// with a file), plus the condition's class and line on stderr when one raises. No guard.
constexpr const char* kBareRRunner = R"R(src <- srcfile("plot.R")
exprs <- tryCatch(parse("plot.R", keep.source = TRUE), error = function(e) {
  line <- suppressWarnings(as.integer(sub("^[^:]*:([0-9]+):.*$", "\1", conditionMessage(e))))
  cat(sprintf("plotq-r-error: parseError %s
", line), file = stderr())
  stop(e)
})
top <- NA
for (i in seq_along(exprs)) {
  top <- attr(exprs, "srcref")[[i]][[1L]]
  withCallingHandlers({
    v <- withVisible(eval(exprs[[i]], globalenv()))
    if (v$visible) print(v$value)
  }, error = function(e) {
    line <- top
    for (call in sys.calls()) {
      sr <- attr(call, "srcref")
      if (!is.null(sr) && identical(basename(attr(sr, "srcfile")$filename), "plot.R")) line <- sr[[1L]]
    }
    cat(sprintf("plotq-r-error: %s %s
", class(e)[[1L]], line), file = stderr())
  })
}
)R";
}  // namespace

BareRun run_bare_r(const BareConfig& config, const std::string& source, const std::string& theme, double timeout_s,
                   const std::atomic<bool>& stop) {
  BareRun run;
  if (!make_run_dir(config, run)) return run;
  if (!write_file(run.dir + "/plot.R", source) || !write_file(run.dir + "/plotq_bare_r.R", kBareRRunner)) {
    run.host_error = "cannot write the run dir";
    return run;
  }
  auto start = Clock::now();
  std::vector<std::string> env = child_env(theme);
  env.push_back("HOME=" + run.dir);  // R's per-user files (none with --vanilla) stay in the run dir
  env.push_back("TMPDIR=" + run.dir);
  Spawned s = spawn_captured({config.rscript, "--vanilla", "plotq_bare_r.R"}, env, run.dir, 2);
  return finish_run(std::move(run), s, start, timeout_s, config.sweep_stderr_keep_bytes, stop);
}

std::optional<std::string> r_error_class(std::string_view text) {
  constexpr std::string_view kMark = "plotq-r-error: ";
  auto at = text.rfind(kMark);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + kMark.size());
  auto end = rest.find_first_of(" \n");
  std::string cls(rest.substr(0, end));
  if (cls.empty() || cls.size() > 64) return std::nullopt;
  for (char c : cls)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return std::nullopt;
  return cls;
}

ClassVocabulary load_class_vocabulary(const std::string& python, const std::string& harness_dir) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "MPLBACKEND=Agg"};
  if (const char* home = std::getenv("HOME")) env.push_back(std::string("HOME=") + home);
  auto start = Clock::now();
  Spawned s = spawn_captured({python, "-B", "-c", kVocabularyScript, harness_dir}, env, "/", 1);
  if (s.pid < 0) throw std::runtime_error("exception vocabulary: " + s.error);
  Waited w = wait_child(s, start, 120, 4u << 20, nullptr);
  if (w.timed_out || !WIFEXITED(w.status) || WEXITSTATUS(w.status) != 0)
    throw std::runtime_error("exception vocabulary: " + python + " could not import " + harness_dir + "/errors.py");
  ClassVocabulary v;
  try {
    auto j = nlohmann::json::parse(w.tail);
    for (auto& [printed, name] : j.items()) v.printed_to_name[printed] = name.get<std::string>();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("exception vocabulary: unreadable answer: ") + e.what());
  }
  if (v.printed_to_name.empty()) throw std::runtime_error("exception vocabulary: empty");
  return v;
}

}  // namespace plotq::runs
