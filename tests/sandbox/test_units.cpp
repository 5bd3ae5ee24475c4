// Unit tests of the host-side pieces: safe output reads, bounded capture buffers, tree walks and
// removal, limits arithmetic, config parsing, result JSON, uid block reservation, the generated
// exec filter.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/env.hpp"
#include "sandbox/config.hpp"
#include "sandbox/credentials.hpp"
#include "sandbox/job.hpp"
#include "sandbox/mounts.hpp"
#include "sandbox/output.hpp"
#include "sandbox/rlimits.hpp"
#include "sandbox/seccomp_filter.hpp"
#include "sandbox/watchdog.hpp"

namespace sb = plotq::sandbox;

namespace {

struct TempDir {
  std::string path;
  int fd = -1;
  TempDir() {
    char tmpl[] = "/tmp/plotq-sbunit-XXXXXX";
    path = mkdtemp(tmpl);
    fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~TempDir() {
    close(fd);
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  void write(const std::string& name, const std::string& data) {
    int f = openat(fd, name.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(f >= 0);
    REQUIRE(::write(f, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
    close(f);
  }
};

}  // namespace

TEST_CASE("read_output reads a regular file under its cap", "[output]") {
  TempDir d;
  d.write("out.csv", "a,b\n1,2\n");
  auto r = sb::read_output(d.fd, "out.csv", 100);
  CHECK(r.status == sb::OutputRead::ok);
  CHECK(r.data == "a,b\n1,2\n");
  CHECK(r.measured == 8);
  CHECK(sb::read_output(d.fd, "absent.csv", 100).status == sb::OutputRead::missing);
}

TEST_CASE("read_output refuses a file over its cap with the measured size", "[output]") {
  TempDir d;
  d.write("big", std::string(1001, 'x'));
  auto r = sb::read_output(d.fd, "big", 1000);
  CHECK(r.status == sb::OutputRead::too_large);
  CHECK(r.measured == 1001);
  CHECK(r.data.empty());
  CHECK(sb::read_output(d.fd, "big", 1001).status == sb::OutputRead::ok);
}

TEST_CASE("read_output never follows a symlink", "[output]") {
  TempDir d;
  d.write("secret", "do not read");
  REQUIRE(symlinkat((d.path + "/secret").c_str(), d.fd, "out.csv") == 0);
  auto r = sb::read_output(d.fd, "out.csv", 1000);
  CHECK(r.status == sb::OutputRead::rejected);
  CHECK(r.why == "symlink");
  CHECK(r.data.empty());
}

TEST_CASE("read_output refuses a FIFO without blocking, and a directory", "[output]") {
  TempDir d;
  REQUIRE(mkfifoat(d.fd, "pipe", 0600) == 0);  // nobody ever writes to it: a blocking open would hang
  auto r = sb::read_output(d.fd, "pipe", 1000);
  CHECK(r.status == sb::OutputRead::rejected);
  CHECK(r.why == "fifo");
  REQUIRE(mkdirat(d.fd, "dir", 0700) == 0);
  CHECK(sb::read_output(d.fd, "dir", 1000).why == "directory");
}

TEST_CASE("read_output refuses names that are not plain file names", "[output]") {
  TempDir d;
  for (const char* name : {"", ".", "..", "a/b", "../etc/passwd"}) {
    CHECK_FALSE(sb::valid_file_name(name));
    CHECK(sb::read_output(d.fd, name, 10).status == sb::OutputRead::rejected);
  }
  CHECK(sb::valid_file_name("plot-light.png"));
}

TEST_CASE("read_file reads a path with read_output's refusals", "[output]") {
  TempDir d;
  d.write("plot.py", "print(1)\n");
  d.write("secret", "do not read");
  REQUIRE(symlinkat((d.path + "/secret").c_str(), d.fd, "link.py") == 0);
  REQUIRE(mkfifoat(d.fd, "pipe", 0600) == 0);
  auto r = sb::read_file(d.path + "/plot.py", 100);
  CHECK(r.status == sb::OutputRead::ok);
  CHECK(r.data == "print(1)\n");
  CHECK(sb::read_file(d.path + "/plot.py", 4).status == sb::OutputRead::too_large);
  CHECK(sb::read_file(d.path + "/link.py", 100).why == "symlink");
  CHECK(sb::read_file(d.path + "/pipe", 100).why == "fifo");
  CHECK(sb::read_file(d.path + "/absent.py", 100).status == sb::OutputRead::missing);
  CHECK(sb::read_file(d.path + "/no-dir/plot.py", 100).status == sb::OutputRead::missing);
}

TEST_CASE("HeadTail keeps the first and last bytes only", "[output]") {
  sb::HeadTail ht(4, 6);
  std::string all;
  for (int i = 0; i < 1000; ++i) {
    std::string chunk = std::to_string(i) + ",";
    all += chunk;
    ht.append(chunk.data(), chunk.size());
  }
  CHECK(ht.head() == all.substr(0, 4));
  CHECK(ht.tail() == all.substr(all.size() - 6));
  CHECK(ht.total() == all.size());
  sb::HeadTail small(4, 6);
  small.append("abcdefg", 7);
  CHECK(small.head() == "abcd");
  CHECK(small.tail() == "efg");
  sb::HeadTail big_chunk(2, 3);
  std::string block(100000, 'q');
  block += "xyz";
  big_chunk.append(block.data(), block.size());
  CHECK(big_chunk.tail() == "xyz");
}

TEST_CASE("last_chars counts UTF-8 characters, not bytes", "[output]") {
  CHECK(sb::last_chars("hello", 3) == "llo");
  CHECK(sb::last_chars("h\xC3\xA9llo\xE2\x82\xAC", 2) == "o\xE2\x82\xAC");
  CHECK(sb::last_chars("ab", 10) == "ab");
  CHECK(sb::last_chars("a\xFF", 1) == "\xFF");  // an invalid byte is one character
}

TEST_CASE("measure_tree counts bytes and entries and stops at depth", "[watchdog]") {
  TempDir d;
  d.write("a", std::string(10000, 'a'));
  REQUIRE(mkdirat(d.fd, "sub", 0700) == 0);
  d.write("sub/b", "b");
  REQUIRE(symlinkat("/", d.fd, "root-link") == 0);  // counted, never followed
  sb::TreeLimits lim{1 << 20, 100, 4};
  auto m = sb::measure_tree(d.fd, lim);
  CHECK(m.measurable);
  CHECK(m.entries == 4);
  CHECK(m.bytes >= 10000);
  CHECK(m.bytes < (1u << 20));

  std::string deep = d.path;
  for (int i = 0; i < 6; ++i) {
    deep += "/d";
    REQUIRE(mkdir(deep.c_str(), 0700) == 0);
  }
  auto m2 = sb::measure_tree(d.fd, lim);
  CHECK_FALSE(m2.measurable);
  sb::TreeLimits few{1 << 20, 3, 32};
  auto m3 = sb::measure_tree(d.fd, few);
  CHECK(m3.over_entries(few));
}

TEST_CASE("remove_tree removes any depth without following links", "[output]") {
  TempDir d;
  TempDir outside;
  outside.write("keep", "keep me");
  REQUIRE(mkdirat(d.fd, "work", 0700) == 0);
  int cur = openat(d.fd, "work", O_RDONLY | O_DIRECTORY);
  for (int i = 0; i < 300; ++i) {  // deeper than PATH_MAX allows to name as one path
    REQUIRE(mkdirat(cur, "dddddddddddddddddddd", 0700) == 0);
    int next = openat(cur, "dddddddddddddddddddd", O_RDONLY | O_DIRECTORY);
    REQUIRE(next >= 0);
    close(cur);
    cur = next;
  }
  REQUIRE(openat(cur, "file", O_CREAT | O_WRONLY, 0600) >= 0);
  close(cur);
  REQUIRE(symlink(outside.path.c_str(), (d.path + "/work/link").c_str()) == 0);
  REQUIRE(symlink((outside.path + "/keep").c_str(), (d.path + "/work/link-file").c_str()) == 0);
  CHECK(sb::remove_tree(d.fd, "work") == 0);
  CHECK(faccessat(d.fd, "work", F_OK, AT_SYMLINK_NOFOLLOW) != 0);
  CHECK(access((outside.path + "/keep").c_str(), F_OK) == 0);
}

TEST_CASE("the CPU limit follows the timeout", "[rlimits]") {
  CHECK(sb::cpu_limit_for(0.2, 60) == 1);
  CHECK(sb::cpu_limit_for(2.1, 60) == 3);
  CHECK(sb::cpu_limit_for(600, 60) == 60);
  CHECK(sb::cpu_limit_for(-1, 60) == 1);
}

TEST_CASE("config_from_env maps PLOTQ_<FIELD> and refuses bad values", "[config]") {
  setenv("PLOTQ_RLIMIT_AS_MB", "512", 1);
  setenv("PLOTQ_WARM_MODES", "data,plot", 1);
  setenv("PLOTQ_SANDBOX_COLD", "true", 1);
  auto c = sb::config_from_env();
  CHECK(c.rlimit_as_mb == 512);
  CHECK(c.warm_modes == std::vector<std::string>{"data", "plot"});
  CHECK(c.sandbox_cold);
  CHECK_FALSE(c.harness_dir.empty());
  setenv("PLOTQ_RLIMIT_NPROC", "many", 1);
  CHECK_THROWS_AS(sb::config_from_env(), plotq::ConfigError);
  unsetenv("PLOTQ_RLIMIT_AS_MB");
  unsetenv("PLOTQ_WARM_MODES");
  unsetenv("PLOTQ_SANDBOX_COLD");
  unsetenv("PLOTQ_RLIMIT_NPROC");
}

TEST_CASE("JobResult JSON: nulls, rounding, outputs as sizes, UTF-8 safe text", "[job]") {
  sb::JobResult r;
  r.reason = sb::Reason::disk;
  r.measured = 70000000;
  r.limit = 67108864;
  r.wall_s = 1.23456;
  r.stderr_tail = "bad \xFF byte";
  r.outputs["out.csv"] = "a,b\n";
  auto j = sb::to_json(r);
  CHECK(j["reason"] == "disk");
  CHECK(j["exit_code"].is_null());
  CHECK(j["measured"] == 70000000);
  CHECK(j["wall_s"] == Approx(1.235));
  CHECK(j["outputs"]["out.csv"] == 4);
  CHECK(j["stderr_tail"] == "bad \xEF\xBF\xBD byte");
  CHECK(j.dump().size() > 0);
  for (int i = 0; i <= static_cast<int>(sb::Reason::invalid_job); ++i)
    CHECK(std::string(sb::to_string(static_cast<sb::Reason>(i))).size() > 1);
}

TEST_CASE("uid blocks of two launchers never overlap", "[credentials]") {
  char tmpl[] = "/tmp/plotq-sblock-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  {
    sb::UidBlock a(dir, 62000, 10, 3);
    sb::UidBlock b(dir, 62000, 10, 4);
    CHECK(a.first() == 62000);
    CHECK(b.first() == 62004);  // blocks start at multiples of their size
    CHECK(a.job_uid(0) == 62001);
    CHECK_THROWS(sb::UidBlock(dir, 62000, 10, 4));  // only 3 left
  }
  sb::UidBlock again(dir, 62000, 10, 4);  // released with the first two
  CHECK(again.first() == 62000);
  std::filesystem::remove_all(dir);
}

// The cold path's plotq_exec_arm.so carries the exec filter as generated C (exec_filter_bpf.h);
// it must be instruction for instruction the program the warm path installs.
namespace generated {
#include "exec_filter_bpf.h"
}

TEST_CASE("the exec-arm module's program is build_exec_filter()'s", "[seccomp]") {
  sb::BpfProgram built = sb::build_exec_filter();
  constexpr std::size_t n = sizeof generated::plotq_exec_filter / sizeof generated::plotq_exec_filter[0];
  REQUIRE(built.insns.size() == n);
  for (std::size_t i = 0; i < n; ++i) {
    INFO("instruction " << i);
    CHECK(built.insns[i].code == generated::plotq_exec_filter[i].code);
    CHECK(built.insns[i].jt == generated::plotq_exec_filter[i].jt);
    CHECK(built.insns[i].jf == generated::plotq_exec_filter[i].jf);
    CHECK(built.insns[i].k == generated::plotq_exec_filter[i].k);
  }
}

TEST_CASE("exec_arm_module lives next to the confine library", "[config]") {
  sb::Config c;
  c.confine_lib = "/opt/plotq/lib/libplotq_confine.so";
  CHECK(sb::exec_arm_module(c) == "/opt/plotq/lib/plotq_exec_arm.so");
}

TEST_CASE("hidden paths: only the job dir's own parents are never mounted over", "[units]") {
  for (const char* p : {"/", "//", "/tmp", "/tmp/", "/tmp//", "/tmp/job", "/tmp/job/"}) {
    INFO(p);
    CHECK(sb::covers_job_dir(p));
  }
  for (const char* p : {"/tm", "/tmpx", "/tmp/jo", "/tmp/jobx", "/tmp/job/x", "/var/tmp", "/dev/shm", "/t"}) {
    INFO(p);
    CHECK_FALSE(sb::covers_job_dir(p));
  }
}
