#include "dataset_files.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>

#include "base/error.h"
#include "run_command.h"  // python()

namespace dgcn::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "dgcn-datasets-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  if (made == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_gz(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  if (!text.empty()) {
    ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  }
  ASSERT_EQ(gzclose(f), Z_OK);
}

void write_text(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

void run_python(const std::string& script, const fs::path& cwd) {
  const fs::path file = cwd / "make_fixture.py";
  write_text(file.string(), script);
  const std::string log = (cwd / "make_fixture.log").string();
  const std::string cmd =
      "cd '" + cwd.string() + "' && '" + python() + "' make_fixture.py > '" + log + "' 2>&1";
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::ifstream in(log);
    std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    FAIL() << "python fixture script failed (" << rc << "):\n" << output;
  }
}

void run_python_variants(const std::vector<std::pair<std::string, std::string>>& variants,
                         const fs::path& cwd) {
  std::string driver = "import os\n";
  for (const auto& [name, script] : variants) {
    fs::create_directories(cwd / name);
    write_text((cwd / name / "make_fixture.py").string(), script);
    driver += "os.chdir(" + std::string("'") + (cwd / name).string() + "')\n";
    driver += "exec(compile(open('make_fixture.py').read(), '" + name + "/make_fixture.py', 'exec'), {})\n";
  }
  run_python(driver, cwd);
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void write_tiny_ogb(const std::string& root) {
  write_gz(root + "/raw/edge.csv.gz", "0,1\n1,2\n2,3\n");
  write_gz(root + "/raw/node-feat.csv.gz", "0.5,1\n1.5,2\n2.5,3\n3.5,4\n");
  write_gz(root + "/raw/node-label.csv.gz", "0\n1\n1\n0\n");
  write_gz(root + "/raw/num-node-list.csv.gz", "4\n");
  write_gz(root + "/raw/num-edge-list.csv.gz", "3\n");
  write_gz(root + "/split/sales_ranking/train.csv.gz", "0\n1\n");
  write_gz(root + "/split/sales_ranking/valid.csv.gz", "2\n");
  write_gz(root + "/split/sales_ranking/test.csv.gz", "3\n");
}

std::string shared_dataset(const std::string& name) {
  // The Python tests' variable too, so one setting serves both suites.
  const char* cora = std::getenv("DGCN_CORA_NPZ");
  if (name == "cora.npz" && cora != nullptr && *cora != '\0') return fs::exists(cora) ? cora : "";
  // $DGCN_SHARED_DATASETS: the folder .ci/run found them in (a clone made
  // away from ../shared); else beside the clone.
  const char* folder = std::getenv("DGCN_SHARED_DATASETS");
  const char* source = std::getenv("DGCN_SOURCE_DIR");
  fs::path p = folder != nullptr && *folder != '\0'
                   ? fs::path(folder) / name
                   : fs::path(source != nullptr ? source : ".") / ".." / "shared" / "datasets" / name;
  return fs::exists(p) ? p.string() : "";
}

}  // namespace dgcn::testing
