// The R zygote (harness/rzygote.R + sandbox/r_zygote.cpp): an R job forked from it must observe
// what a cold R job observes (its process, its sandbox, R's own start state), and nothing of an
// earlier job. Real R, real kernel; a host without R prints PLOTQ-SKIP.
#include <fcntl.h>
#include <unistd.h>

#include <iostream>
#include <set>
#include <string_view>

#include "fixture.hpp"

using namespace sbt;

namespace {

// Everything an R job can see of its process, its sandbox and R's start state, one "key value"
// line each. Random parts of R's temp dir's name are masked; mounts lose the tmpfs owner (the
// zygote's user namespace's root for a warm job, the host's for a cold one: warm against cold).
const char* kLook = R"(globals_at_start <- ls(globalenv(), all.names = TRUE)
show <- function(key, value) cat(key, " ", paste(value, collapse = " | "), "\n", sep = "")
st <- readLines("/proc/self/status")
field <- function(k) trimws(sub("^[^:]*:", "", grep(paste0("^", k, ":"), st, value = TRUE)))
mask <- function(s) sub("Rtmp[A-Za-z0-9]+", "RtmpXXXXXX", s)
show("cwd", getwd())
show("files", mask(sort(list.files(".", all.files = TRUE, no.. = TRUE))))
env <- Sys.getenv()
show("env", mask(paste(names(env), env, sep = "=")))
show("ids", c(field("Uid"), field("Gid"), field("Groups")))
for (k in c("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters"))
  show(k, field(k))
show("limits", readLines("/proc/self/limits"))
m <- strsplit(readLines("/proc/self/mounts"), " ")
show("mounts", sort(vapply(m, function(x) paste(x[[2]], gsub(",uid=[0-9]+,gid=[0-9]+", "", x[[4]])), "")))
show("procs", sort(grep("^[0-9]+$", list.files("/proc"), value = TRUE)))
show("hostname", Sys.info()[["nodename"]])
show("tmp", sort(list.files("/tmp", all.files = TRUE, no.. = TRUE)))
show("tempdir", c(mask(tempdir()), dir.exists(tempdir())))
show("home", path.expand("~"))
show("libpaths", .libPaths())
show("search", search())
show("globals", globals_at_start)
show("seed", exists(".Random.seed", envir = globalenv()))
show("cmdargs", commandArgs())
show("interactive", interactive())
show("pid", Sys.getpid())
show("fds", sort(as.integer(list.files("/proc/self/fd"))))
)";

bool have_r() {
  if (::access(sb::Config{}.r_exec.c_str(), X_OK) == 0) return true;
  std::cout << "PLOTQ-SKIP: R is not installed (" << sb::Config{}.r_exec << ")\n";
  return false;
}

sb::JobSpec r_job(const std::string& source, bool cold, double timeout_s = 60) {
  sb::JobSpec s;
  s.mode = "r";
  s.files["plot.R"] = source;
  s.argv = {"--plot", "plot.R"};
  s.env = {{"ANYPLOT_THEME", "light"}};
  s.outputs["result.json"] = 1 << 16;  // the harness's record: an error's class and line
  s.timeout_s = timeout_s;
  s.cold = cold;
  return s;
}

// Whether `needle` is anywhere in the writable memory of process `pid` (read as root through
// /proc/<pid>/mem; a region that cannot be read is skipped).
bool in_memory_of(pid_t pid, const std::string& needle) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(mem >= 0);
  std::string line, chunk(1 << 20, '\0');
  bool found = false;
  while (!found && std::getline(maps, line)) {
    unsigned long from = 0, to = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &from, &to, perms) != 3 || perms[1] != 'w') continue;
    for (unsigned long at = from; at < to && !found; at += chunk.size() - needle.size()) {
      ssize_t n = ::pread(mem, chunk.data(), std::min<unsigned long>(chunk.size(), to - at), static_cast<off_t>(at));
      if (n <= 0) break;
      found = std::string_view(chunk.data(), static_cast<std::size_t>(n)).find(needle) != std::string_view::npos;
      if (static_cast<unsigned long>(n) < chunk.size()) break;
    }
  }
  ::close(mem);
  return found;
}

void r_config(sb::Config& c) {
  c.sandbox_max_jobs = 1;
  c.stdout_head_bytes = 1 << 16;
  c.warm_modes = {"r"};
}

}  // namespace

TEST_CASE("an R job forked from the R zygote sees what a cold R job sees", "[rzygote][hostile]") {
  if (!have_r()) return;
  Sandbox box(r_config);
  box.wait_zygote("r");
  auto warm = box.run(r_job(kLook, false));
  INFO(warm.stderr_tail);
  REQUIRE(warm.reason == sb::Reason::ok);
  CHECK(warm.warm);
  auto cold = box.run(r_job(kLook, true));
  REQUIRE(cold.reason == sb::Reason::ok);
  CHECK_FALSE(cold.warm);
  auto w = lines_of(warm.stdout_head), c = lines_of(cold.stdout_head);
  REQUIRE(c.size() >= 20);
  for (const auto& [key, value] : c) {
    INFO(key << "\n  warm: " << w[key] << "\n  cold: " << value);
    // ids: the warm job's uid is the zygote namespace's 1+slot (the same host uid). fds: a cold R
    // holds rharness.R open (R's -f reads it as it goes); the warm child parsed it whole.
    if (key == "ids" || key == "fds") continue;
    CHECK(w[key] == value);
  }
  CHECK(w["NoNewPrivs"] == "1");
  CHECK(w["CapEff"] == "0000000000000000");
  CHECK(w["procs"] == "1");
  CHECK(w["pid"] == "1");
  CHECK(w["files"] == "plot.R | RtmpXXXXXX");  // R's temp dir in the work dir (TMPDIR), as cold
  CHECK(w["globals"].empty());
  CHECK(w["seed"] == "FALSE");
  CHECK(w["home"] == "/tmp/job");
  CHECK(w["tempdir"] == "/tmp/job/RtmpXXXXXX | TRUE");
  CHECK(w["fds"] == "0 | 1 | 2 | 3");  // 3: the listing's own descriptor (the report fd closed after arming)
  CHECK(c["fds"] == "0 | 1 | 2 | 3 | 4");  // and rharness.R, which a cold R reads as it goes
}

TEST_CASE("an R job cannot see anything an earlier R job left: every job is a fresh fork of the zygote", "[rzygote][hostile]") {
  if (!have_r()) return;
  Sandbox box(r_config);
  box.wait_zygote("r");
  // Job A plants a secret wherever an R process keeps state: the global environment, the search
  // path, a preloaded package's own state (ggplot2's current theme), options, the environment
  // variables, an attached package, the RNG, its temp dir and its work dir.
  const std::string plant = R"(SECRET <- "secret-of-job-a-7f3e"
attach(list(planted = SECRET), name = "plotq:planted")
ggplot2::theme_set(ggplot2::theme_dark())
options(plotq.planted = SECRET)
Sys.setenv(PLANTED = SECRET)
library(tidyr)
set.seed(42)
writeLines(SECRET, file.path(tempdir(), "planted.txt"))
writeLines(SECRET, "planted.txt")
cat("planted", tempdir(), "\n")
)";
  const std::string look = R"(cat("global", exists("SECRET"), "\n")
cat("attached_env", exists("planted"), "\n")
cat("theme", identical(ggplot2::theme_get(), ggplot2::theme_grey()), "\n")
cat("option", is.null(getOption("plotq.planted")), "\n")
cat("env", Sys.getenv("PLANTED", "unset"), "\n")
cat("attached", "package:tidyr" %in% search(), "\n")
cat("seed", exists(".Random.seed", envir = globalenv()), "\n")
cat("files", grep("^Rtmp", list.files(".", all.files = TRUE, no.. = TRUE), invert = TRUE, value = TRUE), "\n")
cat("tempfiles", length(list.files(tempdir(), all.files = TRUE, no.. = TRUE)), "\n")
cat("draw", runif(1), "\n")
)";
  // And the host's message for it (here its environment) stays nowhere in the zygote, whose memory
  // every later job inherits: the zygote parses a job's message only in the job's child.
  auto plant_job = r_job(plant, false);
  plant_job.env["PLANTED_BY_HOST"] = "host-secret-of-job-a";
  auto a = box.run(plant_job);
  INFO(sb::to_json(a).dump() << "\n" << a.outputs["result.json"]);
  REQUIRE(a.reason == sb::Reason::ok);
  REQUIRE(a.warm);
  CHECK_THAT(a.stdout_head, Catch::Contains("planted"));
  auto zpid = box.launcher->zygote_pid("r");
  REQUIRE(zpid);
  CHECK(in_memory_of(*zpid, "ggplot2"));  // the reading works: the zygote's own preload is there
  CHECK_FALSE(in_memory_of(*zpid, "host-secret-of-job-a"));
  std::set<std::string> draws;
  for (int i = 0; i < 2; ++i) {
    auto b = box.run(r_job(look, false));
    INFO(b.stdout_head << b.stderr_tail);
    REQUIRE(b.reason == sb::Reason::ok);
    CHECK(b.warm);
    CHECK_THAT(b.stdout_head, Catch::Contains("global FALSE \n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("attached_env FALSE \n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("theme TRUE \n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("option TRUE \n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("env unset \n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("attached FALSE \n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("seed FALSE \n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("files plot.R \n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("tempfiles 0 \n"));
    auto at = b.stdout_head.find("draw ");
    if (at != std::string::npos) draws.insert(b.stdout_head.substr(at, b.stdout_head.find('\n', at) - at));
  }
  CHECK(draws.size() == 2);  // R seeds each job afresh: not the zygote's state twice
}

TEST_CASE("the R zygote: a killed zygote takes its running job with it and comes back for the next", "[rzygote]") {
  if (!have_r()) return;
  Sandbox box(r_config);
  box.wait_zygote("r");
  auto zpid = box.launcher->zygote_pid("r");
  REQUIRE(zpid);
  bool done = false;
  sb::JobResult killed;
  box.launcher->run(r_job("repeat {}\n", false, 30), [&](sb::JobResult r) {
    killed = std::move(r);
    done = true;
  });
  box.drive([] { return false; }, 1500);  // the job is forked and spinning
  REQUIRE(::kill(*zpid, SIGKILL) == 0);
  box.drive([&] { return done; }, 40000);
  REQUIRE(done);
  // As a Python job whose zygote dies under it (test_warm.cpp): killed after its entry reported,
  // the sandbox lost it (sandbox_lost, not retried: the job may have had side effects); before,
  // retried cold (it would then spin into its timeout: never the case 1.5 s in).
  INFO(sb::to_string(killed.reason) << " " << killed.message);
  CHECK(killed.reason == sb::Reason::sandbox_lost);
  CHECK(killed.attempts == 1);
  CHECK(killed.filter == "armed tsync");
  // The zygote's keeper exits after it (it waits for the zygote): noticed, reaped.
  box.drive([&] { return !box.launcher->zygote_ready("r"); }, 5000);
  box.check_no_job_process();
  auto next = box.run(r_job("cat('next\\n')\n", false));
  CHECK(next.reason == sb::Reason::ok);
  CHECK_THAT(next.stdout_head, Catch::Contains("next"));
  box.wait_zygote("r");
  CHECK(box.launcher->zygote_pid("r") != zpid);
}
