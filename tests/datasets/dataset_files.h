// Helpers for the dataset reader tests: a temporary folder, files written in
// the real outside layouts (gzip text with zlib, .npy/.npz with numpy/scipy
// through the environment's Python, testing::python()), and catching a reader's error message.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dgcn::testing {

// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Writes `text` to `path` (creating parent folders), gzip-compressed or plain.
void write_gz(const std::string& path, const std::string& text);
// A 4-node, 3-edge graph in OGB's node-property layout under `root` (raw/*.csv.gz,
// split/sales_ranking/{train,valid,test}.csv.gz): nodes 0-1 train, 2 valid, 3 test.
void write_tiny_ogb(const std::string& root);
void write_text(const std::string& path, const std::string& text);

// Runs `script` with the environment's Python (numpy, scipy) in `cwd`; fails the
// test with the script's output when it does not exit 0.
void run_python(const std::string& script, const std::filesystem::path& cwd);

// Runs each script of `variants` (folder name -> script) in its own fresh
// namespace and its own subfolder cwd/<name>, all in one interpreter (numpy
// and scipy are imported once: each python start costs about a second here).
void run_python_variants(const std::vector<std::pair<std::string, std::string>>& variants,
                         const std::filesystem::path& cwd);

// The message of the dgcn::Error that fn() throws, or "" when it throws nothing.
std::string error_of(const std::function<void()>& fn);

// $DGCN_SOURCE_DIR/../shared/datasets/<name>, or the folder
// $DGCN_SHARED_DATASETS names ($DGCN_CORA_NPZ for cora.npz when set), or ""
// when absent.
std::string shared_dataset(const std::string& name);

}  // namespace dgcn::testing
