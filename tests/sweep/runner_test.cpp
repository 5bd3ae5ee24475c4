// SweepRunner with a fake backend (unit level; the real backends are tested in bare_test.cpp and
// by the catalogue sweeps): recording, the jobs bound, refusals, stop/cancel, resume, errors.
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>

#include "sweep/outcome.hpp"
#include "sweep/runner.hpp"
#include "tests/sweep/helpers.hpp"

using namespace plotq;
using namespace plotq::runs;
using namespace plotq::sweep_test;

namespace {

// Answers every file after delay_s on the io_context; records what it was asked.
struct FakeBackend : SweepBackend {
  explicit FakeBackend(boost::asio::io_context& i) : io(i) {}
  boost::asio::io_context& io;
  std::map<std::string, Outcome> support_of;
  std::vector<std::string> started;
  int in_flight = 0, max_in_flight = 0;
  double delay_s = 0.005;
  bool cancelled = false;
  std::function<FileOutcome(const SweepTask&, const std::vector<std::string>&)> answer;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> timers;

  Outcome support(const std::string& library) override {
    auto it = support_of.find(library);
    return it == support_of.end() ? Outcome::ok : it->second;
  }
  void start(const SweepTask& task, const std::vector<std::string>& themes, double,
             std::function<void(FileOutcome)> done) override {
    started.push_back(task.file.rel_path);
    max_in_flight = std::max(max_in_flight, ++in_flight);
    auto timer = std::make_shared<boost::asio::steady_timer>(io, std::chrono::microseconds(long(delay_s * 1e6)));
    timers.push_back(timer);
    timer->async_wait([this, task, themes, done = std::move(done)](const boost::system::error_code&) {
      --in_flight;
      FileOutcome out;
      if (cancelled) {
        out.cancelled = true;
      } else if (answer) {
        out = answer(task, themes);
      } else {
        for (const auto& th : themes) {
          store::SweepResult r;
          r.theme = th;
          r.outcome = store::SweepOutcome::render;
          r.reason = "ok";
          r.png_bytes = 10;
          out.themes.push_back(r);
        }
      }
      done(std::move(out));
    });
  }
  void cancel_all() override {
    cancelled = true;
    for (auto& t : timers) t->cancel();
  }
};

struct Fixture {
  TempDir t;
  std::unique_ptr<store::Db> db = migrated(t.file("p.db"));
  boost::asio::io_context io;
  FakeBackend backend{io};
  std::int64_t id = 0;
  std::vector<SweepFile> files;

  explicit Fixture(int n, const std::string& themes = "light,dark") {
    id = store::sweeps::create(*db, make_sweep("s", "bare", themes), kNow);
    for (int i = 0; i < n; ++i) add("plots/p" + std::to_string(i) + "/implementations/python/matplotlib.py", "print(" + std::to_string(i) + ")\n");
  }
  void add(const std::string& rel, const std::string& text) {
    std::string abs = t.write("cat/" + rel, text);
    files.push_back({rel, abs, library_of(rel)});
  }
  // Runs the files not yet recorded, as `plotq sweep run --resume` does.
  SweepCounts run(RunnerOptions o, std::function<void(SweepRunner&, const SweepCounts&)> on_file = nullptr,
                  std::string* error = nullptr) {
    auto done = store::sweeps::finished_paths(*db, id);
    std::vector<SweepFile> pending;
    for (const auto& f : files)
      if (std::find(done.begin(), done.end(), f.rel_path) == done.end()) pending.push_back(f);
    std::unique_ptr<SweepRunner> runner;
    runner = std::make_unique<SweepRunner>(io, *db, id, backend, o,
                                           [&](const SweepCounts& c, const std::vector<store::SweepResult>&) {
                                             if (on_file) on_file(*runner, c);
                                           });
    bool finished = false;
    runner->start(pending, files.size(), files.size() - pending.size(), [&] { finished = true; });
    io.restart();
    io.run();
    CHECK(finished);
    if (error) *error = runner->error();
    return runner->counts();
  }
  std::vector<store::SweepResult> rows() { return store::sweeps::results(*db, id); }
};

}  // namespace

TEST_CASE("runner: records every file with its identity - --jobs bounds the files in flight") {
  Fixture f(6);
  RunnerOptions o;
  o.themes = {"light", "dark"};
  o.jobs = 2;
  std::vector<std::size_t> seen;
  SweepCounts c = f.run(o, [&](SweepRunner&, const SweepCounts& c) { seen.push_back(c.done); });
  CHECK(f.backend.max_in_flight == 2);
  CHECK(f.backend.started.size() == 6);
  CHECK(c.total == 6);
  CHECK(c.done == 6);
  CHECK(c.skipped == 0);
  CHECK(c.renders == 12);
  CHECK(c.fails == 0);
  CHECK(seen == std::vector<std::size_t>{1, 2, 3, 4, 5, 6});
  auto rows = f.rows();
  REQUIRE(rows.size() == 12);
  CHECK(rows[0].path == f.files[0].rel_path);
  CHECK(rows[0].library == "matplotlib");
  CHECK(rows[0].sha256 == load_sweep_task(f.files[0], 0).sha256);
  CHECK(rows[0].theme == "dark");
  CHECK(rows[1].theme == "light");

  Fixture one(4);
  o.jobs = 1;
  one.run(o);
  CHECK(one.backend.max_in_flight == 1);
}

TEST_CASE("runner: unsupported libraries and over-cap files fail without running, in every theme") {
  Fixture f(1);
  f.add("plots/b/implementations/python/bokeh.py", "import bokeh\n");
  f.add("plots/c/implementations/python/altair.py", "import altair\n");
  f.add("plots/d/implementations/python/matplotlib.py", std::string(kMaxRenderSourceChars + 10, '#'));
  f.backend.support_of = {{"bokeh", Outcome::runtime_unavailable}, {"altair", Outcome::invalid_library}};
  RunnerOptions o;
  o.themes = {"light", "dark"};
  SweepCounts c = f.run(o);
  CHECK(f.backend.started == std::vector<std::string>{f.files[0].rel_path});
  CHECK(c.done == 4);
  CHECK(c.fails == 6);
  std::map<std::string, std::string> reason;
  for (const auto& r : f.rows()) {
    CHECK(r.wall_s == 0);
    reason[r.library + "/" + r.theme] = r.reason_class;
  }
  CHECK(reason["bokeh/light"] == "runtime_unavailable");
  CHECK(reason["bokeh/dark"] == "runtime_unavailable");
  CHECK(reason["altair/dark"] == "invalid_library");
  CHECK(reason["matplotlib/light"] == "ok");
  std::size_t big = 0;
  for (const auto& r : f.rows()) big += r.reason == "source_too_large" ? 1 : 0;
  CHECK(big == 2);
}

TEST_CASE("runner: stop() records nothing of the running files - a resume draws exactly the rest") {
  Fixture f(5, "light");
  RunnerOptions o;
  o.themes = {"light"};
  o.jobs = 2;
  f.backend.delay_s = 0.02;
  SweepCounts c = f.run(o, [](SweepRunner& r, const SweepCounts& c) {
    if (c.done == 2) r.stop();  // Ctrl-C after the second file
  });
  CHECK(c.done == 2);
  auto first = f.backend.started;
  CHECK(first.size() >= 3);  // the third (and fourth) were in flight and got cancelled
  CHECK(f.backend.cancelled);
  auto done = store::sweeps::finished_paths(*f.db, f.id);
  REQUIRE(done.size() == 2);

  f.backend.cancelled = false;
  f.backend.started.clear();
  SweepCounts again = f.run(o);
  CHECK(again.skipped == 2);
  CHECK(again.done == 3);
  CHECK(again.total == 5);
  std::vector<std::string> expected;
  for (const auto& file : f.files)
    if (std::find(done.begin(), done.end(), file.rel_path) == done.end()) expected.push_back(file.rel_path);
  CHECK(f.backend.started == expected);  // finished files are not drawn again
  CHECK(f.rows().size() == 5);
}

TEST_CASE("runner: a backend error stops the sweep - that file is not recorded") {
  Fixture f(4, "light");
  RunnerOptions o;
  o.themes = {"light"};
  f.backend.answer = [&](const SweepTask& t, const std::vector<std::string>& themes) {
    FileOutcome out;
    if (t.file.rel_path == f.files[1].rel_path) {
      out.error = "POST /render: connect failed";
      return out;
    }
    store::SweepResult r;
    r.theme = themes[0];
    set_failure(r, Outcome::plot_error, "ValueError");
    out.themes.push_back(r);
    return out;
  };
  std::string error;
  SweepCounts c = f.run(o, nullptr, &error);
  CHECK(c.done == 1);
  CHECK(error.find("connect failed") != std::string::npos);
  CHECK(error.find(f.files[1].rel_path) != std::string::npos);
  CHECK(f.backend.started.size() == 2);
  auto rows = f.rows();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].reason_class == "ValueError");

  // Themes other than asked are an error too (never a half-recorded file).
  Fixture g(2, "light,dark");
  o.themes = {"light", "dark"};
  g.backend.answer = [](const SweepTask&, const std::vector<std::string>&) {
    FileOutcome out;
    store::SweepResult r;
    r.theme = "light";
    r.png_bytes = 1;
    out.themes.push_back(r);
    return out;
  };
  g.run(o, nullptr, &error);
  CHECK(error.find("other themes") != std::string::npos);
  CHECK(g.rows().empty());
}

TEST_CASE("runner: held files (render path still warming) go after the others in order - and run when only they are left") {
  Fixture f(0);
  for (const char* rel : {"plots/a/implementations/python/plotly.py", "plots/b/implementations/python/matplotlib.py",
                          "plots/c/implementations/python/plotly.py", "plots/d/implementations/python/seaborn.py",
                          "plots/e/implementations/python/matplotlib.py"})
    f.add(rel, "print(1)\n");
  RunnerOptions o;
  o.jobs = 1;
  // Warm once two files have started: a, c held until then, and then drawn where they stand.
  o.hold = [&](const SweepFile& file) { return file.library == "plotly" && f.backend.started.size() < 2; };
  SweepCounts c = f.run(o);
  CHECK(c.done == 5);
  CHECK(f.backend.started == std::vector<std::string>{
                                 "plots/b/implementations/python/matplotlib.py", "plots/d/implementations/python/seaborn.py",
                                 "plots/a/implementations/python/plotly.py", "plots/c/implementations/python/plotly.py",
                                 "plots/e/implementations/python/matplotlib.py"});
  CHECK(f.rows().size() == 10);

  // Never warm: every held file still runs, after the rest, in its own order.
  Fixture g(0);
  for (const char* rel : {"plots/a/implementations/python/plotly.py", "plots/b/implementations/python/plotly.py",
                          "plots/c/implementations/python/matplotlib.py"})
    g.add(rel, "print(1)\n");
  o.hold = [](const SweepFile& file) { return file.library == "plotly"; };
  CHECK(g.run(o).done == 3);
  CHECK(g.backend.started == std::vector<std::string>{"plots/c/implementations/python/matplotlib.py",
                                                      "plots/a/implementations/python/plotly.py",
                                                      "plots/b/implementations/python/plotly.py"});
}
