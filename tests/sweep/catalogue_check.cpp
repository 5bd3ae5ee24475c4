// Checks one recorded sweep of tests/catalogue (env SWEEP_DB, SWEEP_LABEL) against the outcomes
// the catalogue's README documents, file by file. Run by ctest after `plotq sweep run` (see
// CMakeLists.txt); the same expectations hold for the bare and the sandboxed sweep.
#include <cstdlib>

#include "tests/sweep/catalogue_expected.hpp"

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) FAIL(std::string(name) + " is not set (run through ctest)");
  return v;
}

}  // namespace

TEST_CASE("catalogue: every file has its documented outcome") {
  const char* js = std::getenv("SWEEP_JAVASCRIPT");
  const char* lang = std::getenv("SWEEP_LANGUAGE");  // r (the R files), else python or javascript
  std::string language = lang && *lang ? lang : js && std::string(js) == "1" ? "javascript" : "python";
  plotq::sweep_test::check_catalogue_sweep(env("SWEEP_DB"), env("SWEEP_LABEL"), language);
}
