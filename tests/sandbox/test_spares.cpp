// Armed spares (docs/sandbox.md "Armed spares"): a warm job runs in a child its zygote confined
// before the job came. What it can observe must be what a child confined after the job came
// observes, and nothing of the spare's wait or of any earlier job.
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <set>

#include "fixture.hpp"

using namespace sbt;

namespace {

// Everything a job can see of its own process and sandbox, one "key value" line each.
const char* kLook = R"(
import os, re, resource
def show(key, value):
    print(key, value, flush=True)
show("cwd", os.getcwd())
show("files", sorted(os.listdir(".")))
show("env", sorted(os.environ.items()))
show("fds", sorted(os.listdir("/proc/self/fd")))
show("ids", (os.getresuid(), os.getresgid(), os.getgroups()))
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters"):
    show(k, status.get(k, "").strip())
for name in ("RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_NICE"):
    show(name, resource.getrlimit(getattr(resource, name)))
# The empty tmpfs over hidden paths is owned by the user namespace's root: the zygote's for a warm
# job, the host's for a cold one (that is warm against cold, not a spare's doing).
show("mounts", sorted(l.split()[1] + " " + re.sub(r",uid=\d+,gid=\d+", "", l.split()[3]) for l in open("/proc/self/mounts")))
show("procs", sorted(p for p in os.listdir("/proc") if p.isdigit()))
show("hostname", os.uname().nodename)
show("tmp", sorted(os.listdir("/tmp")))
)";

// Waits until the mode's spares are forked (their zygote named their pids).
void wait_spares(Sandbox& box, std::size_t n) {
  box.drive([&] { return box.launcher->spare_pids().size() >= n; }, 20000);
  REQUIRE(box.launcher->spare_pids().size() >= n);
}

// A launcher whose raw jobs run in armed spares: `spares` of them over `slots` job slots.
std::function<void(sb::Config&)> raw_spares(std::size_t slots, std::uint32_t spares, double max_wait_s = 600) {
  return [=](sb::Config& c) {
    c.sandbox_max_jobs = slots;
    c.spares_raw = spares;
    c.spare_max_wait_s = max_wait_s;
  };
}

// The raw zygote up and its spares forked.
void armed(Sandbox& box) {
  box.wait_zygote("raw");
  wait_spares(box, box.launcher->config().spares_raw);
}

}  // namespace

TEST_CASE("a job in an armed spare sees exactly what a job confined after it came sees", "[spares][hostile]") {
  Sandbox box(raw_spares(1, 1));
  armed(box);
  // Let the spare wait (and warm up) a while, so that anything its wait leaves would be there.
  box.drive([] { return false; }, 300);
  auto warm = box.run(raw_job(kLook, 20, false));
  REQUIRE(warm.reason == sb::Reason::ok);
  CHECK(warm.warm);
  CHECK(warm.spare);  // the test really ran in a spare
  auto cold = box.run(raw_job(kLook, 20, true));
  REQUIRE(cold.reason == sb::Reason::ok);
  CHECK_FALSE(cold.spare);
  auto w = lines_of(warm.stdout_head), c = lines_of(cold.stdout_head);
  REQUIRE(w.size() >= 20);
  for (const auto& [key, value] : c) {
    INFO(key << "\n  spare: " << w[key] << "\n  cold:  " << value);
    // ids differ by path only in numbering: the warm job's uid is the zygote namespace's 1+slot.
    if (key == "ids") continue;
    CHECK(w[key] == value);
  }
  CHECK(w["files"] == "['job.py']");
  CHECK(w["fds"] == "['0', '1', '2', '3']");  // 3: the listing's own descriptor
  CHECK(w["NoNewPrivs"] == "1");
  CHECK(w["CapEff"] == "0000000000000000");
  CHECK(w["procs"] == "['1']");
}

TEST_CASE("a job cannot see the spare before it nor any earlier job: every spare is a fresh fork of the zygote", "[spares][hostile]") {
  Sandbox box(raw_spares(1, 2));
  armed(box);
  // Job A plants a secret where a process keeps state: its module state, its environment, its
  // work dir, its heap; then it exits (stragglers and IPC: test_warm.cpp).
  const std::string plant = R"(
import os, sys
SECRET = "secret-of-job-a-7f3e"
sys.modules["os"].PLANTED = SECRET
os.environ["PLANTED"] = SECRET
open("planted.txt", "w").write(SECRET)
keep = [SECRET * 1000]
print("planted", flush=True)
)";
  const std::string look = R"(
import gc, os, sys
print("module", getattr(sys.modules["os"], "PLANTED", None), flush=True)
print("env", os.environ.get("PLANTED"), flush=True)
print("files", sorted(os.listdir(".")), flush=True)
found = any(isinstance(o, str) and "secret-of-job-a" in o for o in gc.get_objects())
print("heap", found, flush=True)
)";
  auto a = box.run(raw_job(plant, 20, false));
  REQUIRE(a.reason == sb::Reason::ok);
  REQUIRE(a.spare);
  CHECK_THAT(a.stdout_head, Catch::Contains("planted"));
  for (int i = 0; i < 3; ++i) {  // the other waiting spare, then its replacements
    auto b = box.run(raw_job(look, 20, false));
    REQUIRE(b.reason == sb::Reason::ok);
    CHECK(b.spare);
    INFO(b.stdout_head);
    CHECK_THAT(b.stdout_head, Catch::Contains("module None\n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("env None\n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("files ['job.py']\n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("heap False\n"));
  }
}

TEST_CASE("spares: the number per mode is the setting's, each in a work dir of its own, a retired one is replaced", "[spares]") {
  Sandbox box(raw_spares(2, 3, 1));
  armed(box);
  CHECK(box.launcher->spares_waiting()["raw"] == 3);
  auto first = box.launcher->spare_pids();
  std::set<pid_t> before(first.begin(), first.end());
  CHECK(before.size() == 3);
  // Each waits in a dir of its own under the runs dir, owned by its slot's uid.
  std::set<std::string> dirs;
  for (const auto& e : std::filesystem::directory_iterator(box.dir + "/runs"))
    if (e.path().filename().string().rfind("spare-", 0) == 0) dirs.insert(e.path().filename().string());
  CHECK(dirs.size() == 3);
  // Older than spare_max_wait_s: retired (their processes gone, their dirs removed), others armed.
  box.drive([&] {
    auto now = box.launcher->spare_pids();
    if (now.size() < 3) return false;
    for (pid_t p : now)
      if (before.count(p)) return false;
    return true;
  }, 10000);
  auto after = box.launcher->spare_pids();
  CHECK(after.size() == 3);
  for (pid_t p : after) CHECK(before.count(p) == 0);
  // The retired ones exit once their socket closes, and their dirs go on the launcher's worker.
  auto gone = [&] {
    for (pid_t p : before)
      if (::kill(p, 0) == 0) return false;
    for (const auto& d : dirs)
      if (std::filesystem::exists(box.dir + "/runs/" + d)) return false;
    return true;
  };
  box.drive(gone, 5000);
  for (pid_t p : before) CHECK((::kill(p, 0) != 0 && errno == ESRCH));
  for (const auto& d : dirs) CHECK_FALSE(std::filesystem::exists(box.dir + "/runs/" + d));
  // And a job still runs in one.
  auto r = box.run(raw_job("print('after retire')\n", 20, false));
  CHECK(r.reason == sb::Reason::ok);
  CHECK(r.spare);
}

TEST_CASE("spares: a job killed for its limits takes the slot's waiting spares with it, and others are armed", "[spares]") {
  Sandbox box(raw_spares(1, 2));
  armed(box);
  auto r = box.run(raw_job("while True:\n    pass\n", 1, false));
  // Its wall-clock timeout or its CPU limit, whichever the host's load lets come first (both are
  // the job's limits; a clean-clone run on a quiet host met RLIMIT_CPU first).
  CHECK((r.reason == sb::Reason::timeout || r.reason == sb::Reason::cpu));
  CHECK(r.spare);
  wait_spares(box, 2);
  auto next = box.run(raw_job("print('next')\n", 20, false));
  CHECK(next.reason == sb::Reason::ok);
  CHECK(next.spare);
  CHECK(next.attempts == 1);  // not a retry after a dead spare
  CHECK_THAT(next.stdout_head, Catch::Contains("next"));
}

namespace {

// A plot job drawing with `library` (JobSpec::warm_for, as runs/ sets it), writing plot-light.png.
sb::JobSpec plot_job(const std::string& library, const std::string& source) {
  sb::JobSpec s;
  s.mode = "plot";
  s.files["plot.py"] = source;
  s.argv = {"--plot", "plot.py"};
  s.env["ANYPLOT_THEME"] = "light";
  s.outputs["plot-light.png"] = 16 << 20;
  s.timeout_s = 60;
  s.warm_for = library;
  return s;
}

const char* kAltairPlot = R"(import altair as alt
import pandas as pd
df = pd.DataFrame({"x": [1, 2, 3], "y": [3, 1, 2]})
alt.Chart(df).mark_line().encode(x="x", y="y").properties(width=400, height=225).save("plot-light.png", scale_factor=2)
)";
const char* kMatplotlibPlot = R"(import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(16, 9))
ax.plot([1, 2, 3], [3, 1, 2])
fig.savefig("plot-light.png", dpi=100)
)";

// A launcher whose plot zygote is up with `plain` plain spares and `altair` spares warmed for
// altair over `slots` job slots, all of them forked.
std::unique_ptr<Sandbox> plot_spares(std::size_t slots, std::uint32_t plain, std::uint32_t altair) {
  auto box = std::make_unique<Sandbox>([=](sb::Config& c) {
    c.sandbox_max_jobs = slots;
    c.spares_plot = plain;
    c.spares_altair = altair;
  });
  box->wait_zygote("plot");
  wait_spares(*box, plain + altair);
  return box;
}

}  // namespace

TEST_CASE("spares: an altair job takes the spare warmed for altair, another library's job a plain one", "[spares]") {
  auto owned = plot_spares(2, 1, 1);
  Sandbox& box = *owned;
  CHECK(box.launcher->spares_waiting()["plot"] == 2);
  auto mpl = box.run(plot_job("matplotlib", kMatplotlibPlot));
  CHECK(mpl.reason == sb::Reason::ok);
  CHECK(mpl.spare);
  CHECK(mpl.spare_warmed_for.empty());
  CHECK(mpl.outputs.count("plot-light.png") == 1);
  wait_spares(box, 2);  // the plain one is replaced by a plain one
  auto alt = box.run(plot_job("altair", kAltairPlot));
  INFO(alt.stderr_tail);
  CHECK(alt.reason == sb::Reason::ok);
  CHECK(alt.exit_code == 0);
  CHECK(alt.spare);
  CHECK(alt.spare_warmed_for == "altair");
  REQUIRE(alt.outputs.count("plot-light.png") == 1);
  CHECK(alt.outputs["plot-light.png"].rfind("\x89PNG", 0) == 0);
  // Its replacement is warmed for altair too, and a second altair job takes it.
  wait_spares(box, 2);
  auto again = box.run(plot_job("altair", kAltairPlot));
  CHECK(again.reason == sb::Reason::ok);
  CHECK(again.spare_warmed_for == "altair");
}

TEST_CASE("spares: with no spare warmed for altair an altair job takes a plain one", "[spares]") {
  auto box = plot_spares(1, 1, 0);
  auto alt = box->run(plot_job("altair", kAltairPlot));
  CHECK(alt.reason == sb::Reason::ok);
  CHECK(alt.spare);
  CHECK(alt.spare_warmed_for.empty());
}
