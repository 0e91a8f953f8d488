// dgcn-prep as a user runs it: JSON on stdout, a message naming the file,
// field and values on stderr with exit status 1, and no partial output.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../graph/store_test_util.h"
#include "fixtures.h"
#include "graph/store_format.h"

namespace dgcn {
namespace {

using testing::ScratchDir;

struct PrepRun {
  int status = -1;
  std::string out, err;
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `dgcn-prep ARGS` through the shell (`prefix` runs first, e.g. a ulimit).
PrepRun prep(const ScratchDir& dir, const std::string& args, const std::string& prefix = "") {
  const char* bin_dir = std::getenv("DGCN_BIN_DIR");
  const std::string bin = std::string(bin_dir != nullptr ? bin_dir : "build/bin") + "/dgcn-prep";
  const std::string out =
      dir.path() + "/../" + std::filesystem::path(dir.path()).filename().string() + ".stdout";
  const std::string err = out + ".stderr";
  const std::string cmd = prefix + "exec " + bin + " " + args + " >" + out + " 2>" + err;
  int rc = std::system(("bash -c \"" + cmd + "\"").c_str());
  PrepRun r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

using testing::contains;

class DgcnPrep : public ::testing::Test {
 protected:
  std::string save(const GraphStore& s, const std::string& name, SaveOptions o = {}) {
    const std::string path = dir_.file(name);
    save_store(s, path, o);
    return path;
  }
  ScratchDir dir_;
};

TEST_F(DgcnPrep, InfoPrintsTheStatistics) {
  GraphStore s = testing::make_store(testing::eight_node_edges());
  s.metadata_json = R"({"reader":"fixture"})";
  const std::string path = save(s, "s.gcn");
  PrepRun r = prep(dir_, "info " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = r.json();
  EXPECT_EQ(j["num_nodes"], 8);
  EXPECT_EQ(j["num_edges"], 16);  // 8 undirected edges, both directions
  EXPECT_EQ(j["num_features"], 4);
  EXPECT_EQ(j["num_classes"], 3);
  EXPECT_EQ(j["task"], "single-label");
  EXPECT_EQ(j["train"], 4);
  EXPECT_EQ(j["valid"], 2);
  EXPECT_EQ(j["test"], 2);
  EXPECT_EQ(j["degree"]["min"], 1);  // node 4
  EXPECT_EQ(j["degree"]["max"], 3);  // node 2
  EXPECT_DOUBLE_EQ(j["degree"]["mean"].get<double>(), 2.0);
  EXPECT_EQ(j["file_bytes"], std::filesystem::file_size(path));
  EXPECT_EQ(j["metadata"]["reader"], "fixture");
  ASSERT_EQ(j["sections"].size(), 8u);
  EXPECT_EQ(j["sections"][2]["name"], "features");
  EXPECT_EQ(j["sections"][2]["raw_bytes"], 8 * 4 * 4);
  EXPECT_EQ(j["sections"][2]["codec"], "raw");  // small sections stay raw
}

TEST_F(DgcnPrep, BadStoresExitOneNamingFileFieldAndValues) {
  struct Case {
    const char* name;
    void (*damage)(GraphStore&);
    const char* message;
  };
  const Case cases[] = {
      {"nan", [](GraphStore& s) { testing::damage<float>(s.features)[5 * 4 + 1] = std::nanf(""); },
       "feature [node 5, column 1] is nan"},
      {"label", [](GraphStore& s) { testing::damage<int32_t>(s.labels)[6] = 3; },
       "label of node 6 is 3, expected a class in [0, 3)"},
      {"indptr", [](GraphStore& s) { testing::damage<int64_t>(s.graph.indptr_buffer())[2] = 9; },
       "indptr is not monotone: indptr[2] = 9 > indptr[3] = 7"},
      {"ids", [](GraphStore& s) { testing::damage<int32_t>(s.graph.indices_buffer())[5] = 8; },
       "indices[5] = 8 is not a node id in [0, 8)"},
  };
  for (const Case& c : cases) {
    GraphStore s = testing::make_store(testing::eight_node_edges());
    c.damage(s);
    const std::string path = save(s, std::string(c.name) + ".gcn");
    PrepRun r = prep(dir_, "info " + path);
    EXPECT_EQ(r.status, 1) << c.name;
    EXPECT_TRUE(contains(r.err, "dgcn-prep: error: " + path + ": " + c.message)) << r.err;
    EXPECT_EQ(r.out, "") << c.name;
  }
}

TEST_F(DgcnPrep, DamagedFilesExitOne) {
  const std::string path = save(testing::make_store(testing::eight_node_edges()), "s.gcn");
  std::vector<char> bytes = testing::read_bytes(path);
  testing::write_bytes(path, {bytes.begin(), bytes.begin() + 1000});
  PrepRun r = prep(dir_, "info " + path);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, path + ": header says the file has")) << r.err;
  EXPECT_TRUE(contains(r.err, "truncated")) << r.err;

  std::vector<char> magic = bytes;
  magic[0] = 'P';
  testing::write_bytes(path, magic);
  r = prep(dir_, "verify " + path);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, path + ": not a .gcn file")) << r.err;

  r = prep(dir_, "info " + dir_.file("absent.gcn"));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "cannot open " + dir_.file("absent.gcn") + ": No such file")) << r.err;
}

TEST_F(DgcnPrep, VerifyReportsEverySection) {
  const std::string path = save(testing::make_store(testing::eight_node_edges()), "s.gcn");
  PrepRun r = prep(dir_, "verify " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.json()["ok"], true);
  EXPECT_EQ(r.json()["sections"].size(), 8u);

  const StoreSection degree = *read_store_header(path).find("degree");
  std::vector<char> bytes = testing::read_bytes(path);
  bytes[degree.offset + 4] ^= 0x01;
  testing::write_bytes(path, bytes);
  r = prep(dir_, "verify " + path);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.json()["ok"], false);
  EXPECT_EQ(r.json()["sections"][7]["name"], "degree");
  EXPECT_EQ(r.json()["sections"][7]["bad_frames"], 1);
  EXPECT_EQ(r.json()["sections"][6]["ok"], true);
  EXPECT_TRUE(contains(r.err, path + ": section 'degree' frame 0 (raw bytes [0, 32)): checksum mismatch"))
      << r.err;
}

TEST_F(DgcnPrep, ConvertWritesOneJsonLineAndTheSameStore) {
  GraphStore s = testing::make_store(testing::cycle_edges(3000), 8, 5);
  const std::string in = save(s, "in.gcn");
  const std::string out = dir_.file("out.gcn");
  PrepRun r = prep(dir_, "convert " + in + " --out " + out + " --raw --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = r.json();
  EXPECT_EQ(j["path"], out);
  EXPECT_EQ(j["bytes"], std::filesystem::file_size(out));
  EXPECT_EQ(j["num_nodes"], 3000);
  EXPECT_EQ(j["num_edges"], 6000);
  EXPECT_GT(j["raw_bytes"].get<double>(), 0);
  EXPECT_GT(j["ratio"].get<double>(), 0);
  EXPECT_GE(j["seconds"].get<double>(), 0);
  EXPECT_TRUE(read_store_header(out).all_raw());
  EXPECT_FALSE(read_store_header(in).all_raw());
  EXPECT_EQ(testing::digest_of(load_store(out)), testing::digest_of(s));
}

TEST_F(DgcnPrep, FailedWriteLeavesExistingOutputUntouched) {
  GraphStore s = testing::make_store(testing::cycle_edges(3000), 8, 5);
  const std::string in = save(s, "in.gcn");
  const std::string out = save(testing::make_store(testing::eight_node_edges()), "out.gcn");
  const std::vector<char> before = testing::read_bytes(out);

  // Invalid input: rejected while loading, nothing written.
  GraphStore bad = s;
  testing::damage<float>(bad.features)[100] = std::numeric_limits<float>::infinity();
  const std::string bad_in = save(bad, "bad.gcn");
  PrepRun r = prep(dir_, "convert " + bad_in + " --out " + out);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, bad_in + ": feature [node 12, column 4] is inf")) << r.err;

  // The disk "fills up" half way (file size limit): the write fails cleanly.
  r = prep(dir_, "convert " + in + " --out " + out, "trap '' XFSZ; ulimit -f 16; ");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "File too large")) << r.err;

  EXPECT_EQ(testing::read_bytes(out), before);
  EXPECT_EQ(dir_.entries(), (std::vector<std::string>{"bad.gcn", "in.gcn", "out.gcn"}));
}

TEST_F(DgcnPrep, UsageErrorsAndHelp) {
  PrepRun r = prep(dir_, "--help");
  EXPECT_EQ(r.status, 0);
  for (const char* cmd : {"info", "verify", "convert", "load-bench"})
    EXPECT_TRUE(contains(r.out, cmd)) << cmd;
  r = prep(dir_, "convert x.gcn --out y.gcn --reorder sideways");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "sideways")) << r.err;
  r = prep(dir_, "");
  EXPECT_EQ(r.status, 2);
}

TEST_F(DgcnPrep, InfoCountsComponents) {
  // The eight-node fixture: a square with a tail (5 nodes) and a triangle;
  // plus 4 more nodes without edges.
  testing::EdgeList e = testing::eight_node_edges();
  e.num_nodes = 12;
  const std::string path = save(testing::make_store(e), "s.gcn");
  PrepRun r = prep(dir_, "info " + path + " --components --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.json()["components"], (nlohmann::json{{"count", 6}, {"largest", 5}}));
  r = prep(dir_, "info " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(r.json().contains("components"));
}

TEST_F(DgcnPrep, ConvertReordersByRcm) {
  // A 400-node path with shuffled ids: RCM lays it out end to end again.
  testing::EdgeList path{400, {}, {}};
  std::vector<int64_t> name(400);
  for (int64_t v = 0; v < 400; ++v) name[v] = (v * 263) % 400;  // 263 is coprime with 400
  for (int64_t v = 0; v + 1 < 400; ++v) path.add(name[v], name[v + 1]);
  GraphStore s = testing::make_store(path, 3, 4);
  s.metadata_json = R"({"reader":"fixture"})";
  const std::string in = save(s, "in.gcn");
  const std::string out = dir_.file("out.gcn");
  PrepRun r = prep(dir_, "convert " + in + " --out " + out + " --reorder rcm --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "reordered by RCM: bandwidth max")) << r.err;
  EXPECT_EQ(r.json()["num_edges"], 798);

  GraphStore back = load_store(out);
  back.validate("reordered", 2);
  nlohmann::json meta = nlohmann::json::parse(back.metadata_json);
  EXPECT_EQ(meta["reader"], "fixture");
  ASSERT_EQ(meta["reorder"].size(), 1u);
  EXPECT_EQ(meta["reorder"][0]["method"], "rcm");
  EXPECT_GT(meta["reorder"][0]["bandwidth_before"]["max"].get<int64_t>(), 100);
  EXPECT_EQ(meta["reorder"][0]["bandwidth_after"]["max"], 1);
  // Node data followed the nodes: the fixture's feature 0 is the old id, its
  // label old id % 4, and old ids < 200 are train; each new row i keeps
  // exactly the neighbours i - 1 and i + 1 of a path.
  std::vector<int64_t> train;
  for (int64_t v = 0; v < 400; ++v) {
    const int64_t old = static_cast<int64_t>(back.features_of(v)[0]);
    EXPECT_EQ(back.label(v), old % 4);
    if (old < 200) train.push_back(v);
    EXPECT_EQ(back.graph.degree(v), (v == 0 || v == 399) ? 1 : 2);
  }
  EXPECT_EQ(std::vector<int64_t>(back.train_nodes().begin(), back.train_nodes().end()), train);

  // The default keeps the order.
  r = prep(dir_, "convert " + in + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::digest_of(load_store(out)), testing::digest_of(s));
}

TEST_F(DgcnPrep, LoadBenchMeasuresEachModeInItsOwnProcess) {
  const std::string path = save(testing::make_store(testing::cycle_edges(3000), 8, 5), "s.gcn");
  PrepRun r = prep(dir_, "load-bench " + path + " --threads 2");
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = r.json();
  EXPECT_EQ(j["private"]["mapped"], false);
  EXPECT_EQ(j["shared_cold"]["built_cache"], true);
  EXPECT_EQ(j["shared_warm"]["built_cache"], false);
  EXPECT_EQ(j["shared_warm"]["mapped"], true);
  EXPECT_GT(j["private"]["peak_rss_mib"].get<double>(), 0);
  EXPECT_EQ(dir_.entries(), std::vector<std::string>{"s.gcn"});  // its temporary cache dir is gone
}

TEST_F(DgcnPrep, SyntheticWritesAStoreInfoReads) {
  const std::string path = dir_.file("tiny.gcn");
  PrepRun r = prep(
      dir_, "synthetic --preset tiny --seed 3 --num-nodes 2000 --mean-degree 12 --threads 2 --out " + path);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.json()["num_nodes"], 2000);
  PrepRun info = prep(dir_, "info " + path);
  ASSERT_EQ(info.status, 0) << info.err;
  nlohmann::json j = info.json();
  EXPECT_EQ(j["num_nodes"], 2000);
  EXPECT_NEAR(j["num_edges"].get<double>(), 12.0 * 2000, 0.05 * 12.0 * 2000);
  EXPECT_EQ(j["num_features"], 16);
  EXPECT_EQ(j["num_classes"], 8);
  EXPECT_EQ(j["task"], "single-label");
  EXPECT_EQ(j["train"], 1000);  // the tiny preset's 0.5 / 0.2 / 0.3
  EXPECT_EQ(j["valid"], 400);
  EXPECT_EQ(j["test"], 600);
  EXPECT_EQ(j["metadata"]["generator"], "synthetic");
  EXPECT_EQ(j["metadata"]["seed"], 3);
  EXPECT_EQ(j["metadata"]["spec"]["mean_degree"], 12.0);

  // The same command writes the same bytes; a bad override names the field.
  const std::string again = dir_.file("again.gcn");
  ASSERT_EQ(
      prep(dir_,
           "synthetic --preset tiny --seed 3 --num-nodes 2000 --mean-degree 12 --threads 1 --out " + again)
          .status,
      0);
  EXPECT_EQ(slurp(path), slurp(again));
  r = prep(dir_, "synthetic --preset tiny --homophily 1.2 --out " + dir_.file("bad.gcn"));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "homophily is 1.2")) << r.err;
  r = prep(dir_, "synthetic --preset huge --out " + dir_.file("bad.gcn"));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "tiny")) << r.err;
}

TEST_F(DgcnPrep, PartitionWritesPartsAndReportsTheCutAndBalance) {
  const std::string path = save(testing::community_store(), "c.gcn");
  const std::string out = dir_.file("parts");
  PrepRun r = prep(dir_, "partition " + path + " --parts 3 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = r.json();
  EXPECT_EQ(j["parts"], 3);
  EXPECT_EQ(j["method"], "metis");
  EXPECT_GT(j["quality"]["cut_entries"].get<int64_t>(), 0);
  EXPECT_LT(j["quality"]["cut_fraction"].get<double>(), 0.5);
  EXPECT_LE(j["quality"]["node_balance"].get<double>(), 1.1);
  EXPECT_EQ(j["quality"]["nodes"].size(), 3u);
  for (const char* f : {"partition.json", "part-000.gcn", "part-001.gcn", "part-002.gcn"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  // info says what a part is; --components needs the whole graph.
  r = prep(dir_, "info " + out + "/part-001.gcn");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.json()["part"]["index"], 1);
  EXPECT_EQ(r.json()["part"]["num_global_nodes"], 400);
  r = prep(dir_, "info --components " + out + "/part-001.gcn");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "--components needs the whole graph")) << r.err;

  // A used folder is refused and left as it was; so is a part as input.
  r = prep(dir_, "partition " + path + " --parts 2 --out " + out);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "is not empty")) << r.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(out + "/partition.json"))["parts"], 3);
  r = prep(dir_, "partition " + out + "/part-000.gcn --parts 2 --out " + dir_.file("again"));
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "already part 0 of 3")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.file("again")));
  r = prep(dir_, "partition " + path + " --parts 0 --out " + dir_.file("zero"));
  EXPECT_EQ(r.status, 2);
  r = prep(dir_, "partition " + path + " --parts 2 --method spectral --out " + dir_.file("spectral"));
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "metis")) << r.err;
}

}  // namespace
}  // namespace dgcn
