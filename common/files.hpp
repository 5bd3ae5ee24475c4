// A whole file written so that no reader ever sees half of it: the bytes go to a hidden temporary
// name beside it (never following a link there), then a rename puts them in place.
#pragma once
#include <sys/types.h>

#include <string>

namespace plotq {

// Writes `bytes` to `path` through `<dir>/.<name>.tmp` and a rename. Returns "" when done, else
// the step that failed with its reason ("write <tmp>: No space left on device"); the temporary
// is removed then and `path` is as it was.
std::string write_file_replacing(const std::string& path, const std::string& bytes, mode_t mode = 0644);

}  // namespace plotq
