// A whole file written so that no reader ever sees half of it: the bytes go to a hidden temporary
// name beside it (never following a link there), then a rename puts them in place.
#pragma once
#include <sys/types.h>

#include <string>
#include <string_view>

namespace plotq {

// Creates `name` under the directory `dirfd` (AT_FDCWD: `name` is a path) as a new file, 0600:
// never an existing path and never through a link (O_EXCL | O_NOFOLLOW), and writes all of
// `bytes` (EINTR retried). Returns the descriptor, still open (the caller may fchown it, then
// closes it), or -1 with errno set; a file left half written is removed.
int write_new_file(int dirfd, const std::string& name, std::string_view bytes);

// Writes `bytes` to `path` through `<dir>/.<name>.tmp` and a rename. Returns "" when done, else
// the step that failed with its reason ("write <tmp>: No space left on device"); the temporary
// is removed then and `path` is as it was.
std::string write_file_replacing(const std::string& path, const std::string& bytes, mode_t mode = 0644);

}  // namespace plotq
