// Helpers for tests that run programs: a shell command with its exit status
// and output (in a ScratchDir from graph/store_test_util.h).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "graph/store_test_util.h"

namespace dgcn::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CommandResult {
  int exit_code = -1;  // exit status, or 128 + signal
  std::string out, err;
};

// The Python of dgcn's environment (scripts/requirements.lock: torch, numpy,
// scipy) as CMake found it: ctest passes it as DGCN_PYTHON; a test binary
// run by hand falls back to python3 on PATH (after `source scripts/env.sh`).
inline std::string python() {
  const char* p = std::getenv("DGCN_PYTHON");
  return p != nullptr && *p != '\0' ? p : "python3";
}

// The path of one of this build's programs (dgcn-prep, dgcn-train, ...):
// in $DGCN_BIN_DIR, which ctest sets, else build/bin for a test binary run by
// hand from the source folder.
inline std::string binary(const std::string& name) {
  const char* dir = std::getenv("DGCN_BIN_DIR");
  return std::string(dir != nullptr ? dir : "build/bin") + "/" + name;
}

// torchrun of that environment, beside its python.
inline std::string torchrun() {
  const std::filesystem::path py = python();
  return py.has_parent_path() ? (py.parent_path() / "torchrun").string() : "torchrun";
}

// Runs `command` with /bin/sh, capturing stdout and stderr through files in `scratch`.
inline CommandResult run_command(const std::string& command, const ScratchDir& scratch) {
  static int counter = 0;
  std::string tag = std::to_string(counter++);
  std::string out = scratch.file("cmd" + tag + ".out"), err = scratch.file("cmd" + tag + ".err");
  int status = std::system((command + " >" + out + " 2>" + err).c_str());
  CommandResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

}  // namespace dgcn::testing
