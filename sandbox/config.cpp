#include "sandbox/config.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "common/env.hpp"
#include "sandbox/confine.hpp"

namespace plotq::sandbox {

bool hidden_in_jobs(const Config& c, const std::string& path) {
  std::vector<std::string> hidden = c.hidden_paths;
  hidden.push_back("/tmp");
  hidden.push_back(c.runs_dir);
  hidden.push_back(c.sandbox_lock_dir);
  for (const auto& h : hidden) {
    if (h.empty()) continue;
    if (path == h || (path.size() > h.size() && path.compare(0, h.size(), h) == 0 && path[h.size()] == '/')) return true;
  }
  return false;
}

namespace {

// Copies src to dst (mode) through a temporary name and a rename, so that a job never sees half a
// file and two processes staging at once do not fight. False on any error.
bool copy_file(const std::string& src, const std::string& dst, mode_t mode) {
  int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return false;
  std::string tmp = dst + ".tmp." + std::to_string(::getpid());
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (out < 0) {
    ::close(in);
    return false;
  }
  char buf[65536];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0 || ::write(out, buf, static_cast<std::size_t>(n)) != n) {
      ok = false;
      break;
    }
  }
  ::close(in);
  ok = ::fchmod(out, mode) == 0 && ok;
  ok = ::close(out) == 0 && ok;
  if (ok) ok = ::rename(tmp.c_str(), dst.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

bool make_dir(const std::string& d) {
  if (::mkdir(d.c_str(), 0755) == 0 || errno == EEXIST) {
    struct stat st {};
    return ::lstat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }
  return false;
}

// A checkout under /tmp (or another path jobs do not see) keeps its harness and confine library
// out of the jobs' reach: stage read-only copies where jobs can read them.
void stage_for_jobs(Config& c) {
  bool harness_hidden = hidden_in_jobs(c, c.harness_dir);
  bool lib_hidden = hidden_in_jobs(c, c.confine_lib);
  if (!harness_hidden && !lib_hidden) return;
  std::size_t h = std::hash<std::string>{}(c.harness_dir + "|" + c.confine_lib);
  char name[32];
  std::snprintf(name, sizeof name, "%016zx", h);
  std::string root = "/var/lib/plotq";
  std::string stage = root + "/stage";
  std::string dir = stage + "/" + name;
  if (!make_dir("/var/lib") || !make_dir(root) || !make_dir(stage) || !make_dir(dir)) return;
  if (harness_hidden) {
    std::string hd = dir + "/harness";
    if (!make_dir(hd)) return;
    DIR* d = ::opendir(c.harness_dir.c_str());
    if (!d) return;
    bool ok = true;
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      bool py = n.size() > 3 && n.compare(n.size() - 3, 3, ".py") == 0;
      bool r = n.size() > 2 && n.compare(n.size() - 2, 2, ".R") == 0;  // rharness.R
      if (py || r)
        ok = copy_file(c.harness_dir + "/" + n, hd + "/" + n, 0644) && ok;
    }
    ::closedir(d);
    if (ok) c.harness_dir = hd;
  }
  // The cold path's exec-arm module lives next to the library (sandbox/exec_arm_module.c).
  if (lib_hidden && copy_file(c.confine_lib, dir + "/libplotq_confine.so", 0755) &&
      copy_file(exec_arm_module(c), dir + "/plotq_exec_arm.so", 0755) &&
      (::access(r_arm_module(c).c_str(), R_OK) != 0 || copy_file(r_arm_module(c), dir + "/plotq_r_arm.so", 0755)) &&
      (::access(r_zygote_module(c).c_str(), R_OK) != 0 ||
       copy_file(r_zygote_module(c), dir + "/plotq_r_zygote.so", 0755)))
    c.confine_lib = dir + "/libplotq_confine.so";
}

}  // namespace

std::uint32_t spares_for(const Config& c, const std::string& mode) {
  if (mode == "raw") return c.spares_raw;
  if (mode == "data") return c.spares_data;
  if (mode == "plot") return c.spares_plot;
  if (mode == "figure") return c.spares_figure;
  return 0;
}

std::vector<SpareWarmUp> spare_warm_ups(const Config& c, const std::string& mode) {
  if (mode == "plot") return {{"altair", c.spares_altair}};
  return {};
}

namespace {

std::string beside_confine_lib(const Config& c, const char* name) {
  std::string::size_type slash = c.confine_lib.rfind('/');
  return (slash == std::string::npos ? std::string(".") : c.confine_lib.substr(0, slash)) + "/" + name;
}

}  // namespace

std::string exec_arm_module(const Config& c) { return beside_confine_lib(c, "plotq_exec_arm.so"); }
std::string r_arm_module(const Config& c) { return beside_confine_lib(c, "plotq_r_arm.so"); }
std::string r_zygote_module(const Config& c) { return beside_confine_lib(c, "plotq_r_zygote.so"); }

std::vector<std::pair<std::string, std::string>> r_env(const Config& c) {
  // What R's bin/R script would export (jobs exec the binary itself: no shell, no exec after the
  // start); Debian splits R_HOME's share, include and doc out to /usr/share/R.
  const std::string& home = c.r_home;
  bool debian = home == "/usr/lib/R";
  return {{"R_HOME", home},
          {"R_SHARE_DIR", debian ? "/usr/share/R/share" : home + "/share"},
          {"R_INCLUDE_DIR", debian ? "/usr/share/R/include" : home + "/include"},
          {"R_DOC_DIR", debian ? "/usr/share/R/doc" : home + "/doc"},
          {"R_LIBS_USER", std::string(kJobDirInside) + "/.R-library-none"}};  // no user library
}

Config resolved(Config c) {
  if (c.harness_dir.empty()) c.harness_dir = project_home() + "/sandbox/harness";
  // A runtime venv reached through a link from a checkout jobs cannot see (tools/runtime.sh puts
  // it under /var/lib/plotq then): exec it by its real directory. Only the directory is resolved:
  // the venv's bin/python is itself a link to the base interpreter, and following it would leave
  // the venv.
  if (hidden_in_jobs(c, c.python)) {
    std::error_code ec;
    std::filesystem::path p(c.python);
    std::filesystem::path dir = std::filesystem::canonical(p.parent_path(), ec);
    if (!ec && !hidden_in_jobs(c, (dir / p.filename()).string())) c.python = (dir / p.filename()).string();
  }
  if (c.confine_lib.empty()) c.confine_lib = std::string(PLOTQ_BINARY_DIR) + "/sandbox/libplotq_confine.so";
  stage_for_jobs(c);
  return c;
}

}  // namespace plotq::sandbox
