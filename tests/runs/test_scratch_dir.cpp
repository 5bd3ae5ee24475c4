// runs/scratch_dir.hpp: the Renderer's private dir for the draws' files.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runs/render_interpret.hpp"
#include "runs/scratch_dir.hpp"

namespace {

std::string temp_parent() {
  char tmpl[] = "/tmp/plotq-scratch-test-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  return tmpl;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("the scratch dir is private and goes with what is left in it") {
  const std::string parent = temp_parent();
  std::string dir;
  {
    plotq::runs::ScratchDir scratch(parent);
    REQUIRE(scratch.ok());
    dir = scratch.path("");
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    auto files = scratch.next_draw(7, "light", ".json");
    REQUIRE(plotq::runs::write_draw_input(scratch.fd(), files, "{}"));
  }
  CHECK_FALSE(exists(dir));
  ::rmdir(parent.c_str());
}

TEST_CASE("each draw gets names of its own and its input is made new, never over a file there") {
  const std::string parent = temp_parent();
  {
    plotq::runs::ScratchDir scratch(parent);
    REQUIRE(scratch.ok());
    auto a = scratch.next_draw(3, "dark", ".js");
    auto b = scratch.next_draw(3, "dark", ".js");
    CHECK(a.input != b.input);
    CHECK(a.png != b.png);
    CHECK(a.input.size() > 3);
    CHECK(a.input.substr(a.input.size() - 3) == ".js");
    CHECK(a.png.substr(a.png.size() - 4) == ".png");
    REQUIRE(plotq::runs::write_draw_input(scratch.fd(), a, "draw()"));
    CHECK_FALSE(plotq::runs::write_draw_input(scratch.fd(), a, "again"));  // O_EXCL: never over it
    plotq::runs::remove_draw_files(scratch.fd(), a);
    CHECK_FALSE(exists(scratch.path(a.input)));
  }
  ::rmdir(parent.c_str());
}

TEST_CASE("a scratch dir that cannot be made is not ok") {
  plotq::runs::ScratchDir scratch("/nonexistent-plotq-parent");
  CHECK_FALSE(scratch.ok());
}

TEST_CASE("a refused render answers each known theme not started with the code and no attempt") {
  auto r = plotq::runs::refused_render({"light", "dark"}, plotq::runs::Outcome::runtime_unavailable);
  REQUIRE(r.outputs.size() == 2);
  for (const auto& [theme, run] : r.outputs) {
    CHECK(run.theme == theme);
    CHECK(run.outcome == plotq::runs::Outcome::runtime_unavailable);
    CHECK(run.job.attempts == 0);
    CHECK_FALSE(run.message.empty());
  }
  CHECK(plotq::runs::not_started("light", plotq::runs::Outcome::cancelled, plotq::runs::RenderMode::plot).mode ==
        plotq::runs::RenderMode::plot);
}
