// Helpers for tests that run programs: a scratch directory and a shell
// command with its exit status and output.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dgcn::testing {

// A fresh directory under $TMPDIR (or /tmp), removed when the object dies.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/dgcn-test-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    char* made = mkdtemp(buf.data());
    if (made == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = made;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

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

// Runs `command` with /bin/sh, capturing stdout and stderr through files in `scratch`.
inline CommandResult run_command(const std::string& command, const ScratchDir& scratch) {
  static int counter = 0;
  std::string tag = std::to_string(counter++);
  std::string out = scratch / ("cmd" + tag + ".out"), err = scratch / ("cmd" + tag + ".err");
  int status = std::system((command + " >" + out + " 2>" + err).c_str());
  CommandResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

}  // namespace dgcn::testing
