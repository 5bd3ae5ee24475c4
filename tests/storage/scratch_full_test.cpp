// The sandbox's scratch space full (issue 16, storage faults): the runs dir on a small tmpfs made
// by the test. A job whose write the full file system refuses fails with its own reason
// (scratch_full, 503, not kept: a retry runs again), a job is refused at start while the space is
// under its floor, and the host is unaffected: plotqd answers, the next job after space is freed
// renders.
#include <sys/mount.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "tests/storage/damage.hpp"
#include "tests/support/dev_plotqd.hpp"
#include "tests/support/skip.hpp"

using namespace plotq::test;
using nlohmann::json;

namespace {

json render(const std::string& job_id, const std::string& source) {
  return {{"job_id", job_id}, {"source", source}, {"library", "matplotlib"}, {"themes", {"light"}}, {"timeout_s", 60}};
}

// Writes 40 MB into its own work dir (within RLIMIT_FSIZE and the work dir's byte budget, above
// what the 24 MiB file system holds), then draws.
const std::string kFiller =
    "import os\nwith open('cache.bin', 'wb') as f:\n    for _ in range(40):\n        f.write(b'x' * 1_000_000)\n" +
    kLinePlot;

}  // namespace

TEST_CASE("scratch full: a job the full runs dir refuses fails as scratch_full and the host goes on") {
  TempDir dir;
  plotq::test::damage::SmallFs runs(dir.path(), "runs", "24m");
  if (runs.path.empty()) return skip_test("needs root and a tmpfs mount (the sandbox's small scratch)");
  TestStore store(dir);
  Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", store.target()},
                           {"PLOTQ_ENVIRONMENT", "development"},
                           {"PLOTQ_RUNS_PER_MINUTE", "10000"},
                           {"PLOTQ_RUNS_DIR", runs.path},
                           {"PLOTQ_MIN_SCRATCH_FREE_MB", "4"}});
  REQUIRE(d.wait_listening(30s));
  auto post = [&](const json& body) { return http_request(d.port(), "POST", "/render", body.dump(), {}, 120s); };

  // The job fills the file system itself: its write is refused (ENOSPC) and it fails for that.
  auto full = post(render("fills", kFiller));
  CHECK(full.status == 503);
  CHECK(full.body == R"({"detail":"scratch_full"})");

  // Space under the floor: refused before it starts.
  // The failed job's work dir is removed after its answer: wait for that, then fill what is left.
  auto job_dirs = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(runs.path))
      n += e.path().filename().string().rfind("job-", 0) == 0;
    return n;
  };
  for (int i = 0; i < 100 && job_dirs() > 0; ++i) std::this_thread::sleep_for(Ms(100));
  REQUIRE(job_dirs() == 0);
  auto fill = [](const std::string& file) {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    REQUIRE(f);
    std::string chunk(1 << 16, 'h');
    while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size() && std::fflush(f) == 0) {
    }
    std::fclose(f);
  };
  std::string hog = runs.path + "/hog";
  fill(hog);
  auto refused = post(render("refused", kLinePlot));
  CHECK(refused.status == 503);
  CHECK(refused.body == R"({"detail":"scratch_full"})");
  CHECK(http_request(d.port(), "GET", "/healthz").status == 200);

  // Space again: the same job ids run (a host outcome is not kept as the answer) and render.
  std::filesystem::remove(hog);
  auto ok = post(render("refused", kLinePlot));
  REQUIRE(ok.status == 200);
  CHECK(ok.json()["outputs"]["light"]["reason"].is_null());
  CHECK(ok.json()["outputs"]["light"]["width"] == 3200);
  // Nothing of the failed jobs is left in the scratch space.
  for (const auto& e : std::filesystem::directory_iterator(runs.path))
    CHECK(e.path().filename().string().rfind("job-", 0) != 0);
}
