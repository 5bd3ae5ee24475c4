// The JavaScript snippet libraries as the figure renderer has them: one table,
// sandbox/figure/lib/snippet_libraries.json, which the renderer's lib/snippet.mjs loads its pages'
// bundles from and the host reads here to tell whether a library can be drawn, so the host keeps
// no copy of which file each library is.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace plotq::sandbox {

// By library: the files it needs under the modules dir (PLOTQ_JS_MODULES): its UMD bundle, or for
// MUI X (bundled by esbuild) the packages it is made of. Read once, from
// <project home>/sandbox/figure/lib/snippet_libraries.json; empty (and logged) when that file
// cannot be read, so that no snippet library is drawn.
const std::map<std::string, std::vector<std::string>>& snippet_library_files();

// Parses the table's text; throws on a malformed one (a library without files, a file that is not
// a plain relative path).
std::map<std::string, std::vector<std::string>> parse_snippet_libraries(const std::string& text);

}  // namespace plotq::sandbox
