#include "fuzz/fuzz_files.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace dgcn::fuzz {
namespace fs = std::filesystem;

namespace {

// The readers log what they read (spdlog, info); a fuzzer runs them a
// million times, so every harness is silent: logging cost ~90% of the OGB
// harness's time and filled its log with gigabytes.
[[maybe_unused]] const bool kSilent = [] {
  spdlog::set_level(spdlog::level::off);
  return true;
}();

// Owns the scratch folder: made on first use, removed when the process exits
// normally (a crash leaves it for the post-mortem).
struct ScratchFolder {
  std::string path;
  ScratchFolder() {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    const fs::path d = base / ("dgcn-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    path = d.string();
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
}  // namespace

const std::string& scratch_folder() {
  static const ScratchFolder folder;
  return folder.path;
}

std::string write_file(const std::string& name, const uint8_t* data, size_t size) {
  const fs::path path = fs::path(scratch_folder()) / name;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path.string();
}

std::string write_files(const std::vector<std::string>& names, const uint8_t* data, size_t size) {
  const fs::path dir = fs::path(scratch_folder()) / "files";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  size_t at = 0;
  for (const std::string& name : names) {
    if (size - at < 4) break;
    uint32_t len = 0;
    std::memcpy(&len, data + at, 4);
    at += 4;
    len = static_cast<uint32_t>(std::min<size_t>(len, size - at));
    const fs::path path = dir / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data + at), len);
    at += len;
  }
  return dir.string();
}

std::string pack(const std::vector<std::string>& contents) {
  std::string out;
  for (const std::string& c : contents) {
    const auto len = static_cast<uint32_t>(c.size());
    out.append(reinterpret_cast<const char*>(&len), 4);
    out += c;
  }
  return out;
}

}  // namespace dgcn::fuzz
