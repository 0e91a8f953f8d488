#include "datasets/ogb_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "dataset_files.h"
#include "fixtures.h"

namespace dgcn {
namespace {

using testing::error_of;
using testing::TempDir;

// The files of an OGB layout over the 8-node fixture graph, by path under DIR;
// tests change one entry to make it bad. Node v has features
// (v, v + 0.5, -v / 4) and class v % 3; node 7 is unlabelled ("nan"), node 6's
// class is written as a float ("0.0").
std::map<std::string, std::string> ogb_files() {
  auto edges = testing::eight_node_edges();
  std::map<std::string, std::string> f;
  for (size_t i = 0; i < edges.src.size(); ++i) {
    f["raw/edge.csv.gz"] += std::to_string(edges.src[i]) + "," + std::to_string(edges.dst[i]) + "\n";
  }
  for (int v = 0; v < 8; ++v) {
    f["raw/node-feat.csv.gz"] += fmt::format("{},{},{}\n", v, v + 0.5, -v / 4.0);
    f["raw/node-label.csv.gz"] += v == 7 ? "nan\n" : v == 6 ? "0.0\n" : std::to_string(v % 3) + "\n";
  }
  f["raw/num-node-list.csv.gz"] = "8\n";
  f["raw/num-edge-list.csv.gz"] = std::to_string(edges.src.size()) + "\n";
  f["split/sales_ranking/train.csv.gz"] = "3\n0\n1\n2\n";
  f["split/sales_ranking/valid.csv.gz"] = "4\n5\n";
  f["split/sales_ranking/test.csv.gz"] = "6\n";
  return f;
}

void write_layout(const TempDir& dir, const std::map<std::string, std::string>& files) {
  for (const auto& [name, text] : files) {
    if (name.ends_with(".gz")) {
      testing::write_gz(dir / name, text);
    } else {
      testing::write_text(dir / name, text);
    }
  }
}

OgbOptions at(const std::filesystem::path& root) {
  OgbOptions o;
  o.root = root.string();
  return o;
}

// The reader's error for the fixture with `name` replaced by `text`.
std::string error_with(const std::string& name, const std::string& text, OgbOptions options = {}) {
  TempDir dir;
  auto files = ogb_files();
  files[name] = text;
  write_layout(dir, files);
  options.root = dir.path().string();
  options.num_threads = 2;
  return error_of([&] { read_ogb(options); });
}

TEST(OgbReader, ReadsTheProductsLayout) {
  TempDir dir;
  write_layout(dir, ogb_files());
  OgbOptions options;
  options.root = dir.path().string();
  options.num_threads = 2;
  GraphStore s = read_ogb(options);
  EXPECT_EQ(s.num_nodes(), 8);
  EXPECT_EQ(s.num_edges(), 16);  // 8 undirected edges, symmetrized
  auto p = s.graph.indptr();
  auto ids = s.graph.indices<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(ids.begin() + p[2], ids.begin() + p[3]), (std::vector<int32_t>{1, 3, 4}));
  EXPECT_EQ(s.degrees()[2], 3);
  ASSERT_EQ(s.num_features, 3);
  EXPECT_FLOAT_EQ(s.features_of(5)[1], 5.5f);
  EXPECT_FLOAT_EQ(s.features_of(5)[2], -1.25f);
  EXPECT_EQ(s.task, Task::kSingleLabel);
  EXPECT_EQ(s.num_classes, 3);
  EXPECT_EQ(s.label(4), 1);
  EXPECT_EQ(s.label(6), 0);
  EXPECT_EQ(s.label(7), -1);
  EXPECT_EQ(std::vector<int64_t>(s.train_nodes().begin(), s.train_nodes().end()),
            (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(s.valid_nodes().size(), 2u);
  EXPECT_EQ(s.test_nodes()[0], 6);
  EXPECT_NE(s.metadata_json.find("\"split\":\"sales_ranking\""), std::string::npos) << s.metadata_json;
}

TEST(OgbReader, ReadsPlainCsvAndNoFeatures) {
  TempDir dir;
  for (const auto& [name, text] : ogb_files()) {
    if (name != "raw/node-feat.csv.gz") testing::write_text(dir / name.substr(0, name.size() - 3), text);
  }
  OgbOptions options;
  options.root = dir.path().string();
  GraphStore s = read_ogb(options);
  EXPECT_EQ(s.num_edges(), 16);
  EXPECT_EQ(s.num_features, 0);
  EXPECT_EQ(s.label(5), 2);
}

TEST(OgbReader, SameStoreForAnyThreadCountAndChunkSize) {
  TempDir dir;
  auto files = ogb_files();
  // A bigger random graph so that many chunks are in flight.
  std::string edges;
  const int n = 3000, m = 20000;
  for (int i = 0; i < m; ++i) edges += fmt::format("{},{}\n", (i * 7919) % n, (i * 104729 + 13) % n);
  files["raw/edge.csv.gz"] = edges;
  files["raw/num-edge-list.csv.gz"] = std::to_string(m);
  files["raw/num-node-list.csv.gz"] = std::to_string(n);
  files["raw/node-feat.csv.gz"] = files["raw/node-label.csv.gz"] = "";
  for (int v = 0; v < n; ++v) {
    files["raw/node-feat.csv.gz"] += fmt::format("{},{}\n", v * 0.25, -v);
    files["raw/node-label.csv.gz"] += std::to_string(v % 5) + "\n";
  }
  write_layout(dir, files);
  OgbOptions options;
  options.root = dir.path().string();
  options.num_threads = 1;
  GraphStore one = read_ogb(options);
  options.num_threads = 4;
  options.chunk_bytes = 100;
  GraphStore four = read_ogb(options);
  auto same = [](const Buffer& a, const Buffer& b) {
    return a.size() == b.size() && std::equal(a.data(), a.data() + a.size(), b.data());
  };
  EXPECT_TRUE(same(one.graph.indptr_buffer(), four.graph.indptr_buffer()));
  EXPECT_TRUE(same(one.graph.indices_buffer(), four.graph.indices_buffer()));
  EXPECT_TRUE(same(one.features, four.features));
  EXPECT_TRUE(same(one.labels, four.labels));
  EXPECT_EQ(one.num_classes, 5);
  EXPECT_FLOAT_EQ(four.features_of(2999)[0], 749.75f);
}

TEST(OgbReader, EdgeOptionsComeFromTheCaller) {
  TempDir dir;
  auto files = ogb_files();
  files["raw/edge.csv.gz"] += "3,3\n0,1\n";
  files["raw/num-edge-list.csv.gz"] = "10";
  write_layout(dir, files);
  OgbOptions options;
  options.root = dir.path().string();
  options.edges.symmetrize = false;
  options.edges.drop_self_loops = false;
  GraphStore s = read_ogb(options);
  EXPECT_EQ(s.num_edges(), 9);  // 8 directed + the loop; the repeated 0,1 dropped
}

TEST(OgbReader, BadInputNamesFileLineAndValue) {
  EXPECT_NE(error_with("raw/edge.csv.gz", "0,1\n1,2\n2,x\n")
                .find("raw/edge.csv.gz: line 3: '2,x' field 2 is 'x', not a number"),
            std::string::npos)
      << error_with("raw/edge.csv.gz", "0,1\n1,2\n2,x\n");
  std::string err = error_with("raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,0\n2,4\n5,6\n6,8\n7,5\n");
  EXPECT_NE(err.find("edge.csv.gz: line 7: node id 8 is not in [0, 8)"), std::string::npos) << err;
  err = error_with("raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,0\n2,4\n5,6\n6,7,1\n7,5\n");
  EXPECT_NE(err.find("edge.csv.gz: line 7: '6,7,1' has 3 fields, expected 2"), std::string::npos) << err;
  err = error_with("raw/num-edge-list.csv.gz", "9\n");
  EXPECT_NE(err.find("edge.csv.gz: has 8 lines, but num-edge-list announces 9"), std::string::npos) << err;
  err = error_with("raw/num-edge-list.csv.gz", "7\n");
  EXPECT_NE(err.find("edge.csv.gz: line 8: more lines than the 7 that num-edge-list announces"),
            std::string::npos)
      << err;
  err = error_with("raw/num-node-list.csv.gz", "9\n");
  EXPECT_NE(err.find("node-feat.csv.gz: has 8 lines, but num-node-list announces 9"), std::string::npos)
      << err;
  err = error_with("raw/num-node-list.csv.gz", "eight\n");
  EXPECT_NE(err.find("num-node-list.csv.gz: line 1 is 'eight', expected a non-negative integer"),
            std::string::npos)
      << err;
  err = error_with("raw/num-node-list.csv.gz", "1000000000000\n");
  EXPECT_NE(err.find("num-node-list announces 1000000000000 lines, more than this"), std::string::npos)
      << err;
}

TEST(OgbReader, BadFeaturesAndLabelsAreNamed) {
  std::string feats = "0,0.5,0\n1,1.5,-0.25\n2,2.5,-0.5\n3,nan,1\n4,4.5,1\n5,5.5,1\n6,6.5,1\n7,7.5,1\n";
  std::string err = error_with("raw/node-feat.csv.gz", feats);
  EXPECT_NE(err.find("node-feat.csv.gz: line 4: feature 2 is nan, features must be finite"),
            std::string::npos)
      << err;
  feats = "0,0.5,0\n1,1.5\n";
  err = error_with("raw/node-feat.csv.gz", feats);
  EXPECT_NE(err.find("node-feat.csv.gz: line 2: has 2 fields, expected 3"), std::string::npos) << err;
  err = error_with("raw/node-label.csv.gz", "0\n1\n2\n0\n1.5\n2\n0\n1\n");
  EXPECT_NE(err.find("node-label.csv.gz: line 5: label '1.5' is not a class id"), std::string::npos) << err;
  err = error_with("raw/node-label.csv.gz", "0\n1\n2\n0\n1\n-3\n0\n1\n");
  EXPECT_NE(err.find("node-label.csv.gz: line 6: label -3 is not a class id"), std::string::npos) << err;
  OgbOptions three_classes;
  three_classes.num_classes = 3;
  err = error_with("raw/node-label.csv.gz", "0\n1\n2\n0\n1\n2\n3\n1\n", three_classes);
  EXPECT_NE(err.find("node-label.csv.gz: line 7: label 3 is not below num_classes 3"), std::string::npos)
      << err;
}

TEST(OgbReader, GzipProblemsAndSplitsAreNamed) {
  std::string err = error_with("raw/edge.csv.gz", "");
  EXPECT_NE(err.find("edge.csv.gz: has 0 lines, but num-edge-list announces 8"), std::string::npos) << err;
  err = error_with("split/sales_ranking/valid.csv.gz", "4\n99\n");
  EXPECT_NE(err.find("valid.csv.gz: line 2: node id 99 is not in [0, 8)"), std::string::npos) << err;
  err = error_with("split/other/train.csv.gz", "1\n");
  EXPECT_NE(err.find("holds 2 split folders (other, sales_ranking); keep the one to use"), std::string::npos)
      << err;
  err = error_with("split/sales_ranking/test.csv.gz", "6\n1\n");
  EXPECT_NE(err.find("node 1 is in both train and test"), std::string::npos) << err;

  // A truncated gzip file: cut a valid one in the middle.
  TempDir dir;
  auto files = ogb_files();
  std::string big;
  for (int i = 0; i < 5000; ++i) big += fmt::format("{},{}\n", i % 8, (i * 3 + 1) % 8);
  files["raw/edge.csv.gz"] = big;
  files["raw/num-edge-list.csv.gz"] = "5000";
  write_layout(dir, files);
  const std::string edge = dir / "raw/edge.csv.gz";
  std::ifstream in(edge, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  testing::write_text(edge, bytes.substr(0, bytes.size() - 30));
  err = error_of([&] { read_ogb(at(dir.path())); });
  EXPECT_NE(err.find("raw/edge.csv.gz: truncated gzip stream"), std::string::npos) << err;

  std::filesystem::remove_all(dir.path() / "split");
  err = error_of([&] { read_ogb(at(dir.path())); });
  EXPECT_NE(err.find("/split is missing"), std::string::npos) << err;
  err = error_of([&] { read_ogb(at(dir.path() / "nowhere")); });
  EXPECT_NE(err.find("nowhere/raw is missing"), std::string::npos) << err;
}

}  // namespace
}  // namespace dgcn
