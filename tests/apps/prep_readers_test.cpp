// dgcn-prep's reader subcommands (apps/prep/{ogb,graphsaint,npz,edgelist}_command.cpp)
// as a user runs them: JSON on stdout and a .gcn file on success; on bad
// input exit status 1, a message naming the file, line or field, and no
// output file (an existing one is left untouched).
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ci_skip.h"
#include "datasets/dataset_files.h"

namespace dgcn {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

struct PrepRun {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `dgcn-prep ARGS` with stdout and stderr captured under `dir`/logs.
PrepRun prep(const TempDir& dir, const std::string& args) {
  const char* bin_dir = std::getenv("DGCN_BIN_DIR");
  const std::string bin = std::string(bin_dir != nullptr ? bin_dir : "build/bin") + "/dgcn-prep";
  fs::create_directories(dir.path() / "logs");
  const fs::path out = dir.path() / "logs" / "stdout", err = dir.path() / "logs" / "stderr";
  const std::string cmd = bin + " " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(out), slurp(err)};
}

// The names in `dir`/out, where every test writes its .gcn files.
std::vector<std::string> outputs(const TempDir& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir.path() / "out")) return names;
  for (const auto& e : fs::directory_iterator(dir.path() / "out"))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void expect_failure(const PrepRun& r, const std::string& message) {
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

class PrepReaders : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_.path() / "out"); }
  std::string out(const std::string& name) const { return (dir_.path() / "out" / name).string(); }
  TempDir dir_;
};

TEST_F(PrepReaders, EdgeListWritesAStoreAndRejectsAGarbageLine) {
  testing::write_gz(dir_ / "g.txt.gz", "# a triangle and an edge\n0 1\n1 2\n2 0\n3 4\n");
  PrepRun ok = prep(dir_, "edgelist --file " + dir_ / "g.txt.gz" + " --out " + out("g.gcn") + " --threads 2");
  ASSERT_EQ(ok.status, 0) << ok.err;
  nlohmann::json j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["num_nodes"], 5);
  EXPECT_EQ(j["num_edges"], 8);
  PrepRun directed = prep(dir_, "edgelist --directed --file " + dir_ / "g.txt.gz" + " --out " + out("d.gcn"));
  ASSERT_EQ(directed.status, 0) << directed.err;
  EXPECT_EQ(nlohmann::json::parse(directed.out)["num_edges"], 4);

  testing::write_text(dir_ / "bad.txt", "0 1\n1 two\n");
  expect_failure(prep(dir_, "edgelist --file " + dir_ / "bad.txt" + " --out " + out("bad.gcn")),
                 "bad.txt: line 2: destination 'two' is not a node id");
  // A failed run leaves an existing output untouched and no temporary file.
  const std::string before = slurp(out("g.gcn"));
  expect_failure(prep(dir_, "edgelist --file " + dir_ / "bad.txt" + " --out " + out("g.gcn")), "line 2");
  EXPECT_EQ(slurp(out("g.gcn")), before);
  EXPECT_EQ(outputs(dir_), (std::vector<std::string>{"d.gcn", "g.gcn"}));
}

TEST_F(PrepReaders, OgbWritesAStoreAndRejectsWrongCounts) {
  const std::string root = dir_ / "ogbn_tiny";
  testing::write_tiny_ogb(root);
  PrepRun ok = prep(dir_, "ogb --root " + root + " --out " + out("tiny.gcn"));
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["num_edges"], 6);
  PrepRun info = prep(dir_, "info " + out("tiny.gcn"));
  ASSERT_EQ(info.status, 0) << info.err;
  nlohmann::json j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["num_features"], 2);
  EXPECT_EQ(j["num_classes"], 2);
  EXPECT_EQ(j["train"], 2);

  testing::write_gz(root + "/raw/num-edge-list.csv.gz", "4\n");
  expect_failure(prep(dir_, "ogb --root " + root + " --out " + out("bad.gcn")),
                 "raw/edge.csv.gz: has 3 lines, but num-edge-list announces 4");
  testing::write_gz(root + "/raw/num-edge-list.csv.gz", "3\n");
  testing::write_gz(root + "/raw/node-feat.csv.gz", "0.5,1\n1.5,nan\n2.5,3\n3.5,4\n");
  expect_failure(prep(dir_, "ogb --root " + root + " --out " + out("bad.gcn")),
                 "node-feat.csv.gz: line 2: feature 2 is nan");
  EXPECT_EQ(outputs(dir_), (std::vector<std::string>{"tiny.gcn"}));
}

TEST_F(PrepReaders, NpzMakesASeededSplitAndRejectsABadSpec) {
  const std::string cora = testing::shared_dataset("cora.npz");
  if (cora.empty()) DGCN_SKIP_OUTSIDE_CI("../shared/datasets/cora.npz is absent");
  PrepRun ok = prep(dir_, "npz --file " + cora + " --seed 3 --out " + out("cora.gcn"));
  ASSERT_EQ(ok.status, 0) << ok.err;
  nlohmann::json j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["num_nodes"], 2708);
  EXPECT_EQ(j["num_edges"], 10556);
  PrepRun info = prep(dir_, "info " + out("cora.gcn"));
  ASSERT_EQ(info.status, 0) << info.err;
  j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["train"], 140);
  EXPECT_EQ(j["valid"], 500);
  EXPECT_EQ(j["test"], 1000);
  EXPECT_EQ(j["num_features"], 1433);

  // Cora (Planetoid version): 78 components, the largest with 2485 nodes;
  // reordering keeps them and shrinks the bandwidth.
  info = prep(dir_, "info --components " + out("cora.gcn"));
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["components"],
            (nlohmann::json{{"count", 78}, {"largest", 2485}}));
  PrepRun rcm = prep(dir_, "npz --file " + cora + " --seed 3 --reorder rcm --out " + out("cora-rcm.gcn"));
  ASSERT_EQ(rcm.status, 0) << rcm.err;
  info = prep(dir_, "info --components " + out("cora-rcm.gcn"));
  ASSERT_EQ(info.status, 0) << info.err;
  j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["components"], (nlohmann::json{{"count", 78}, {"largest", 2485}}));
  EXPECT_EQ(j["train"], 140);
  const nlohmann::json& reorder = j["metadata"]["reorder"][0];
  EXPECT_LT(reorder["bandwidth_after"]["mean"].get<double>(),
            reorder["bandwidth_before"]["mean"].get<double>() / 2)
      << reorder;

  expect_failure(prep(dir_, "npz --file " + cora + " --split ratio:0.9,0.9,0 --out " + out("bad.gcn")),
                 "--split 'ratio:0.9,0.9,0': ratios add up to 1.8");
  expect_failure(
      prep(dir_, "npz --file " + cora + " --split per-class:400,valid:1,test:1 --out " + out("bad.gcn")),
      "fewer than the 400 per class asked for");
  EXPECT_EQ(outputs(dir_), (std::vector<std::string>{"cora-rcm.gcn", "cora.gcn"}));
}

TEST_F(PrepReaders, GraphSaintWritesAMultiLabelStoreAndRejectsABadClassMap) {
  testing::run_python(R"(
import json, numpy as np, scipy.sparse as sp
adj = sp.csr_matrix((np.ones(6, dtype=np.float32), ([0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2])), shape=(3, 3))
sp.save_npz('adj_full.npz', adj)
np.save('feats.npy', np.ones((3, 4), dtype=np.float32))
json.dump({'0': [1, 0, 1], '1': [0, 1, 0], '2': [1, 1, 1]}, open('class_map.json', 'w'))
json.dump({'tr': [0], 'va': [1], 'te': [2]}, open('role.json', 'w'))
)",
                      dir_.path());
  PrepRun ok = prep(dir_, "graphsaint --root " + dir_.path().string() + " --out " + out("saint.gcn"));
  ASSERT_EQ(ok.status, 0) << ok.err;
  PrepRun info = prep(dir_, "info " + out("saint.gcn"));
  ASSERT_EQ(info.status, 0) << info.err;
  nlohmann::json j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["task"], "multi-label");
  EXPECT_EQ(j["num_classes"], 3);
  EXPECT_EQ(j["num_edges"], 6);

  // PyG's dataset folder (AmazonProducts/ with the files in raw/) works too.
  fs::create_directories(dir_.path() / "AmazonProducts" / "raw");
  for (const char* f : {"adj_full.npz", "feats.npy", "class_map.json", "role.json"}) {
    fs::copy_file(dir_.path() / f, dir_.path() / "AmazonProducts" / "raw" / f);
  }
  PrepRun pyg = prep(
      dir_, "graphsaint --root " + (dir_.path() / "AmazonProducts").string() + " --out " + out("pyg.gcn"));
  ASSERT_EQ(pyg.status, 0) << pyg.err;
  EXPECT_EQ(nlohmann::json::parse(pyg.out)["num_edges"], 6);
  fs::remove(out("pyg.gcn"));

  testing::write_text(dir_ / "class_map.json", R"({"0": [1, 0, 1], "1": [0, 1, 0], "7": [1, 1, 1]})");
  expect_failure(prep(dir_, "graphsaint --root " + dir_.path().string() + " --out " + out("bad.gcn")),
                 "class_map.json: key '7' is not a node id in [0, 3)");
  EXPECT_EQ(outputs(dir_), (std::vector<std::string>{"saint.gcn"}));
}

TEST_F(PrepReaders, PlanetoidReadsPygsRawFolderWithThePublicSplit) {
  // Cora-like: 2 train nodes, 500 valid, 10 test nodes listed out of order.
  testing::run_python(R"(
import os, pickle, collections, numpy as np, scipy.sparse as sp
test_index = [515, 510, 519, 511, 518, 512, 517, 513, 516, 514]
def feats(ids): return sp.csr_matrix(np.array([[v % 7, 1, 0] for v in ids], dtype=np.float32))
def onehot(ids): return np.array([[1 if v % 2 == c else 0 for c in range(2)] for v in ids], dtype=np.float64)
graph = collections.defaultdict(list)
for v in range(520): graph[v] = [(v + 1) % 520]
os.makedirs('Cora/raw', exist_ok=True)
files = {'x': feats(range(2)), 'y': onehot(range(2)), 'allx': feats(range(510)), 'ally': onehot(range(510)),
         'tx': feats(test_index), 'ty': onehot(test_index), 'graph': graph}
for k, v in files.items(): pickle.dump(v, open('Cora/raw/ind.cora.' + k, 'wb'), protocol=2)
open('Cora/raw/ind.cora.test.index', 'w').write('\n'.join(map(str, test_index)) + '\n')
)",
                      dir_.path());
  PrepRun ok = prep(
      dir_, "planetoid --root " + (dir_.path() / "Cora").string() + " --name Cora --out " + out("cora.gcn"));
  ASSERT_EQ(ok.status, 0) << ok.err;
  const nlohmann::json j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["num_nodes"], 520);
  PrepRun info = prep(dir_, "info " + out("cora.gcn"));
  ASSERT_EQ(info.status, 0) << info.err;
  const nlohmann::json i = nlohmann::json::parse(info.out);
  EXPECT_EQ(i["train"], 2);
  EXPECT_EQ(i["valid"], 500);
  EXPECT_EQ(i["test"], 10);
  expect_failure(
      prep(dir_, "planetoid --root " + dir_.path().string() + " --name cora --out " + out("bad.gcn")),
      "no ind.cora.x in");
  PrepRun name =
      prep(dir_, "planetoid --root " + dir_.path().string() + " --name nell --out " + out("bad.gcn"));
  EXPECT_EQ(name.status, 2) << "a usage error: " << name.err;
  EXPECT_EQ(outputs(dir_), (std::vector<std::string>{"cora.gcn"}));
}

}  // namespace
}  // namespace dgcn
