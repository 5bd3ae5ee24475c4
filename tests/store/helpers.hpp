// Shared helpers for the store tests: a temp dir per test, a migrated database in it, running
// a function in forked children (their exit codes come back), the StoreError code a call throws.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/error.hpp"
#include "store/migrate.hpp"
#include "store/time.hpp"
#include "tests/support/scratch_dir.hpp"

namespace plotq::store::test {

struct TempDir : plotq::test::ScratchDir {
  TempDir() : ScratchDir("plotq-store") {}
};

inline std::unique_ptr<Db> migrated(const std::string& path, Options o = {}) {
  auto db = Db::open(path, o);
  migrate(*db);
  return db;
}

// Forks; the child runs fn and _exits with its result (uncaught exception: 99). Returns the child's
// exit code, or 128 + signal.
inline int in_child(const std::function<int()>& fn) {
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int rc = 99;
    try {
      rc = fn();
    } catch (...) {
    }
    ::_exit(rc);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Forks n children at once; child p runs fn(p) and _exits with its result (an uncaught exception is
// printed and ends it with 99). Returns each child's exit code (or 128 + signal), in order.
inline std::vector<int> in_children(int n, const std::function<int(int)>& fn) {
  std::vector<pid_t> pids;
  for (int p = 0; p < n; ++p) {
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      int rc = 99;
      try {
        rc = fn(p);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", p, e.what());
      }
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

// The StoreError code fn throws, or "no error".
inline std::string code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.code();
  }
  return "no error";
}

// 2026-10-14T09:30:05Z, a fixed "now" for deterministic tests.
constexpr UnixSeconds kNow = 1791970205;

}  // namespace plotq::store::test
