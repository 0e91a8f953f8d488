// Runs one harness over saved inputs, without libFuzzer: the regression test
// of every fuzz finding (tests/regressions/<target>/<name>, one minimized
// input each) in every build, sanitized or not. The harness lets only
// dgcn::Error through (Note [What a fuzz finding is]); anything else ends
// this process the way it would end a fuzz run.
//   <target>_replay FILE|FOLDER...
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {
namespace fs = std::filesystem;

std::vector<fs::path> inputs_in(const fs::path& arg) {
  if (!fs::is_directory(arg)) return {arg};
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(arg)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    if (!fs::exists(argv[i])) {
      std::fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
      return 2;
    }
    for (const fs::path& file : inputs_in(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  // An empty run proves nothing: a moved folder must fail the test, not pass it.
  if (replayed == 0) {
    std::fprintf(stderr, "replay: no inputs given\n");
    return 2;
  }
  std::printf("replayed %zu inputs\n", replayed);
  return 0;
}
