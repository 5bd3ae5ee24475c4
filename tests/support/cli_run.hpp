// Runs a command-line binary (the real plotq) the way the CLI tests do: stdout and stderr to files
// in a scratch dir, then read back. Header-only; plain POSIX.
//
//   CliRun r = run_cli(PLOTQ_CLI_PATH, dir.file(""), "--db x.db sweep list");
//   CHECK(r.rc == 0); CHECK(contains(r.out, "..."));
#pragma once
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace plotq::test {

struct CliRun {
  int rc = -1;  // exit code; -1 when killed by a signal
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `env -u PLOTQ_DB <env> <binary> <args>` through the shell, so that a developer's PLOTQ_DB never
// overrides the test's --db. args and env are plain words chosen by the tests (no quoting); env is
// what `env` takes, e.g. "PLOTQ_TOKEN=x" or "-u PLOTQ_TOKEN". The output files go into out_dir.
inline CliRun run_cli(const std::string& binary, const std::string& out_dir, const std::string& args,
                      const std::string& env = "") {
  std::string out = out_dir + "/stdout", err = out_dir + "/stderr";
  std::string cmd = "env -u PLOTQ_DB " + env + " " + binary + " " + args + " >" + out + " 2>" + err;
  int status = std::system(cmd.c_str());
  CliRun r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) v.push_back(l);
  return v;
}

}  // namespace plotq::test
