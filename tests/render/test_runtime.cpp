// runs/runtime: the runtime's identity read from runtime/venv/plotq-runtime.json beside the
// configured interpreter (the manifest's shape, its path, the refusals of the capped read) and the
// real manifest of the installed venv.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "runs/runtime.hpp"
#include "sandbox/figure_renderer.hpp"

namespace runs = plotq::runs;
namespace fs = std::filesystem;

namespace {

const char* kManifest = R"({"id": "257f08b63c84",
 "lock_sha256": "257f08b63c84b85af2d6a5ab2795760ba80bbe247fa67fb15c73f9f2b243e90c",
 "python": "3.11.2", "packages": {"matplotlib": "3.11.2", "vl-convert-python": "1.9.0.post1"}})";

struct Venv {
  fs::path root;
  Venv() {
    std::string tmpl = (fs::temp_directory_path() / "plotq-runtime-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()));
    root = tmpl;
    fs::create_directories(root / "bin");
  }
  ~Venv() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  std::string python() const { return (root / "bin" / "python").string(); }
  void write(const std::string& text) const { std::ofstream(root / "plotq-runtime.json") << text; }
};

}  // namespace

TEST_CASE("runtime_manifest_path: the venv's root beside <venv>/bin/python") {
  CHECK(runs::runtime_manifest_path("/work/main/runtime/venv/bin/python") == "/work/main/runtime/venv/plotq-runtime.json");
  CHECK(runs::runtime_manifest_path("/usr/bin/python3") == "/usr/plotq-runtime.json");
  CHECK(runs::runtime_manifest_path("python") == "./plotq-runtime.json");
}

TEST_CASE("parse_runtime takes the manifest's shape and nothing else") {
  runs::Runtime r = runs::parse_runtime(kManifest);
  REQUIRE(r.known());
  CHECK(r.id == "257f08b63c84");
  CHECK(r.python == "3.11.2");
  CHECK(r.packages == std::map<std::string, std::string>{{"matplotlib", "3.11.2"}, {"vl-convert-python", "1.9.0.post1"}});
  auto with = [](const char* key, nlohmann::json value) {
    nlohmann::json j = nlohmann::json::parse(kManifest);
    j[key] = std::move(value);
    return runs::parse_runtime(j.dump()).error;
  };
  CHECK(with("id", "257F08B63C84") == "manifest_invalid");  // not lower-case hex
  CHECK(with("id", "257f08b63c8") == "manifest_invalid");   // 11 digits
  CHECK(with("id", "000000000000") == "manifest_invalid");  // not the lock's prefix
  CHECK(with("lock_sha256", 7) == "manifest_invalid");
  CHECK(with("python", "3.11 2") == "manifest_invalid");
  CHECK(with("node", "20.1.0") == "manifest_invalid");  // both interpreters: neither runtime's manifest
  CHECK(with("packages", nlohmann::json::object()) == "manifest_invalid");
  CHECK(with("packages", {{"Bad Name", "1"}}) == "manifest_invalid");
  CHECK(with("packages", {{"numpy", 2}}) == "manifest_invalid");
  CHECK(with("packages", {{"numpy", {{"v", "2"}}}}) == "manifest_invalid");  // nested too deep
  CHECK(runs::parse_runtime("").error == "manifest_invalid");
  CHECK(runs::parse_runtime("[]").error == "manifest_invalid");
  CHECK(runs::parse_runtime(std::string(100000, '[')).error == "manifest_invalid");
}

TEST_CASE("read_runtime: a regular file beside the interpreter, under the cap, never through a link") {
  Venv v;
  CHECK(runs::read_runtime(v.python()).error == "manifest_missing");
  v.write(kManifest);
  runs::Runtime r = runs::read_runtime(v.python());
  CHECK(r.known());
  CHECK(r.id == "257f08b63c84");
  CHECK(r.manifest == (v.root / "plotq-runtime.json").string());
  nlohmann::json j = runs::runtime_json(r);
  CHECK(j["id"] == "257f08b63c84");
  CHECK(j["packages"]["matplotlib"] == "3.11.2");
  CHECK(runs::runtime_id(r) == std::optional<std::string>("257f08b63c84"));

  // A link planted in its place is refused, not followed.
  fs::rename(v.root / "plotq-runtime.json", v.root / "real.json");
  fs::create_symlink(v.root / "real.json", v.root / "plotq-runtime.json");
  runs::Runtime linked = runs::read_runtime(v.python());
  CHECK(linked.error == "manifest_rejected");
  CHECK_FALSE(runs::runtime_id(linked));
  CHECK(runs::runtime_json(linked)["id"].is_null());
  CHECK(runs::runtime_json(linked)["error"] == "manifest_rejected");
  fs::remove(v.root / "plotq-runtime.json");
  // A FIFO would block a plain read.
  REQUIRE(::mkfifo((v.root / "plotq-runtime.json").c_str(), 0600) == 0);
  CHECK(runs::read_runtime(v.python()).error == "manifest_rejected");
  fs::remove(v.root / "plotq-runtime.json");
  // Over the cap.
  v.write(std::string(runs::kMaxRuntimeManifestBytes + 1, ' '));
  CHECK(runs::read_runtime(v.python()).error == "manifest_rejected");
  v.write("{not json");
  CHECK(runs::read_runtime(v.python()).error == "manifest_invalid");
}

TEST_CASE("the installed runtime's manifest names the lock and the Python libraries' packages") {
  runs::Runtime r = runs::read_runtime(PLOTQ_DEFAULT_PYTHON);
  INFO(r.manifest << ": " << r.error);
  REQUIRE(r.known());
  CHECK(r.packages.at("matplotlib").rfind("3.", 0) == 0);
  CHECK(r.packages.count("plotly") == 1);
  CHECK(r.packages.count("bokeh") == 1);
  CHECK(r.packages.count("lets-plot") == 1);
}

TEST_CASE("the JavaScript runtime: runtime/js/plotq-js-runtime.json beside node_modules, node's version, npm names") {
  CHECK(runs::js_runtime_manifest_path("/work/main/runtime/js/node_modules") == "/work/main/runtime/js/plotq-js-runtime.json");
  CHECK(runs::js_runtime_manifest_path("/work/main/runtime/js/node_modules/") == "/work/main/runtime/js/plotq-js-runtime.json");
  Venv v;
  fs::create_directories(v.root / "node_modules");
  const std::string modules = (v.root / "node_modules").string();
  CHECK(runs::read_js_runtime(modules).error == "manifest_missing");
  const char* js = R"({"id": "831232bbf9cf", "lock_sha256": "831232bbf9cfe0f3eb3f569a4eb0a0a8906560c5af8b4cf4d0855e8046f95cea",
    "node": "20.20.2", "packages": {"@mui/x-charts": "7.29.1", "chart.js": "4.4.7"}})";
  std::ofstream(v.root / "plotq-js-runtime.json") << js;
  runs::Runtime r = runs::read_js_runtime(modules);
  REQUIRE(r.known());
  CHECK(r.node == "20.20.2");
  CHECK(r.python.empty());
  CHECK(r.packages.at("@mui/x-charts") == "7.29.1");
  CHECK(runs::runtime_json(r)["node"] == "20.20.2");
  CHECK_FALSE(runs::runtime_json(r).contains("python"));
  // The Python runtime's manifest in its place is not the JavaScript one (and the other way round).
  std::ofstream(v.root / "plotq-js-runtime.json", std::ios::trunc) << kManifest;
  CHECK(runs::read_js_runtime(modules).error == "manifest_invalid");
  v.write(js);
  CHECK(runs::read_runtime(v.python()).error == "manifest_invalid");
}

TEST_CASE("the installed JavaScript runtime names its lock and the five snippet libraries' packages") {
  // tools/setup.sh installs it (npm ci of runtime/js/package-lock.json) and writes the manifest.
  runs::Runtime r = runs::read_js_runtime(plotq::sandbox::runtime_js_modules());
  INFO(r.manifest << ": " << r.error);
  REQUIRE(r.known());
  for (const char* p : {"chart.js", "d3", "echarts", "highcharts", "@mui/x-charts", "react", "esbuild"}) {
    INFO(p);
    CHECK(r.packages.count(p) == 1);
  }
}
