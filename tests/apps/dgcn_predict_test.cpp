// dgcn-predict end to end: its test accuracy from class.npy equals
// dgcn-train's for the same checkpoint, numpy reads every file, ids are the
// source dataset's also after a reordering, 2 ranks write the same bytes as
// one, and bad inputs are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "datasets/npy.h"
#include "fixtures.h"
#include "graph/reorder.h"
#include "graph/store_format.h"
#include "json_output.h"
#include "partition/partition_files.h"
#include "run_command.h"
#include "train_runs.h"

namespace dgcn {
namespace {

using nlohmann::json;
using testing::read_text;
using testing::summary_of;

const std::string kPredict = DGCN_PREDICT_BIN;

class DgcnPredict : public testing::DgcnTrainRuns {
 protected:
  // Trains 3 epochs with checkpoints (once per fixture), returns the summary.
  json trained() {
    ckpt_ = scratch_.file("ckpt");
    auto r = train("--epochs 3 --checkpoint " + ckpt_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return summary_of(r);
  }
  testing::CommandResult predict(const std::string& flags) {
    return testing::run_command(kPredict + " --threads 1 --timeout 30 " + flags, scratch_);
  }
  // The store split into 2 random parts; the folder.
  std::string partitioned() {
    const std::string parts = scratch_.file("parts");
    WritePartitionOptions partition;
    partition.partition.method = PartitionMethod::kRandom;
    partition.source_path = data_;
    write_partition(load_store(data_), parts, partition);
    return parts;
  }
  std::string ckpt_;
};

std::vector<int64_t> int64s(const std::string& path) {
  return to_int64(read_npy_file(path), path);
}

TEST_F(DgcnPredict, TestAccuracyFromClassNpyEqualsDgcnTrainsAndRanksAgree) {
  const json t = trained();
  const std::string out = scratch_.file("p");
  auto r = predict("--checkpoint " + ckpt_ + "/checkpoint-000003.pt --data " + data_ + " --out " + out +
                   " --nodes test --what class,probs,logits,embeddings");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = summary_of(r);
  const GraphStore store = load_store(data_);
  const std::vector<int64_t> ids = int64s(out + ".node_ids.npy"), cls = int64s(out + ".class.npy");
  ASSERT_EQ(ids.size(), store.test_nodes().size());
  int64_t correct = 0;
  for (size_t i = 0; i < ids.size(); ++i) correct += cls[i] == store.label(ids[i]);
  const double acc = static_cast<double>(correct) / static_cast<double>(ids.size());
  EXPECT_EQ(acc, t["test_acc"].get<double>()) << "class.npy's accuracy is dgcn-train's";
  EXPECT_EQ(s["acc"], t["test_acc"]);
  EXPECT_EQ(s["rows"], ids.size());
  EXPECT_EQ(s["epoch"], 3);
  EXPECT_EQ(s["embedding_layer"], 1) << "2 GCN layers, no head: the hidden one";

  // Two ranks, each inferring its share: the same ids and classes, and the
  // same values to float rounding (a BLAS may round a row's product
  // differently when the matrix around it has other rows: OpenBLAS does on
  // some CPUs).
  auto two =
      predict("--checkpoint " + ckpt_ + "/checkpoint-000003.pt --data " + data_ + " --out " +
              scratch_.file("q") + " --nodes test --what class,probs,logits,embeddings --nproc-per-node 2");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  for (const char* part : {"node_ids", "class"}) {
    EXPECT_EQ(read_text(out + "." + part + ".npy"), read_text(scratch_.file("q") + "." + part + ".npy"))
        << part;
  }
  for (const char* part : {"probs", "logits", "embeddings"}) {
    const std::string a_path = out + "." + part + ".npy", b_path = scratch_.file("q") + "." + part + ".npy";
    const Buffer a = to_float32(read_npy_file(a_path), a_path);
    const Buffer b = to_float32(read_npy_file(b_path), b_path);
    ASSERT_EQ(a.size(), b.size()) << part;
    const auto x = a.as<float>(), y = b.as<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_NEAR(x[i], y[i], 1e-5 * std::max(1.0f, std::abs(x[i]))) << part << " element " << i;
    }
  }
  // A folder means its best checkpoint.
  auto best = predict("--checkpoint " + ckpt_ + " --data " + data_ + " --out " + scratch_.file("b"));
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_EQ(summary_of(best)["checkpoint"], ckpt_ + "/best.pt");
  EXPECT_EQ(summary_of(best)["epoch"], t["best_epoch"]);
}

TEST_F(DgcnPredict, NumpyReadsEveryFile) {
  const std::string python = testing::python();
  trained();
  const std::string out = scratch_.file("p");
  ASSERT_EQ(predict("--checkpoint " + ckpt_ + " --data " + data_ + " --out " + out +
                    " --nodes all --what class,probs,logits,embeddings")
                .exit_code,
            0);
  const std::string script = scratch_.file("read.py");
  std::ofstream(script)
      << "import json, sys, numpy as np\n"
         "p = sys.argv[1]\n"
         "ids, cls = np.load(p + '.node_ids.npy'), np.load(p + '.class.npy')\n"
         "probs, logits = np.load(p + '.probs.npy'), np.load(p + '.logits.npy')\n"
         "emb = np.load(p + '.embeddings.npy')\n"
         "print(json.dumps({'ids': [str(ids.dtype), list(ids.shape)],\n"
         "  'probs': [str(probs.dtype), list(probs.shape)], 'emb': list(emb.shape),\n"
         "  'sums_to_one': bool(np.allclose(probs.sum(1), 1, atol=1e-5)),\n"
         "  'argmax': bool((probs.argmax(1) == cls).all() and (logits.argmax(1) == cls).all()),\n"
         "  'relu': bool((emb >= 0).all()), 'first_ids': ids[:3].tolist()}))\n";
  auto py = testing::run_command(python + " " + script + " " + out, scratch_);
  ASSERT_EQ(py.exit_code, 0) << py.err;
  const json j = json::parse(py.out);
  EXPECT_EQ(j["ids"], json::array({"int64", json::array({400})}));
  EXPECT_EQ(j["probs"], json::array({"float32", json::array({400, 4})}));
  EXPECT_EQ(j["emb"], json::array({400, 16}));
  EXPECT_TRUE(j["sums_to_one"].get<bool>());
  EXPECT_TRUE(j["argmax"].get<bool>());
  EXPECT_TRUE(j["relu"].get<bool>());
  EXPECT_EQ(j["first_ids"], json::array({0, 1, 2}));
}

TEST_F(DgcnPredict, IdsAreTheSourceDatasetsAlsoAfterAReordering) {
  trained();
  const GraphStore store = load_store(data_);
  std::vector<int64_t> perm(static_cast<size_t>(store.num_nodes()));
  std::iota(perm.rbegin(), perm.rend(), 0);  // reversed: new node i is old node n-1-i
  const std::string reordered = scratch_.file("reversed.gcn");
  save_store(permute(store, perm, 1, "reverse"), reordered);
  ASSERT_EQ(
      predict("--checkpoint " + ckpt_ + " --data " + data_ + " --out " + scratch_.file("a") + " --nodes all")
          .exit_code,
      0);
  auto r = predict("--checkpoint " + ckpt_ + " --data " + reordered + " --out " + scratch_.file("r") +
                   " --nodes all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("is not the one the model was trained on"), std::string::npos) << "a different digest";
  const auto a_ids = int64s(scratch_.file("a.node_ids.npy")), a_cls = int64s(scratch_.file("a.class.npy"));
  const auto r_ids = int64s(scratch_.file("r.node_ids.npy")), r_cls = int64s(scratch_.file("r.class.npy"));
  ASSERT_EQ(r_ids.size(), a_ids.size());
  for (size_t i = 0; i < r_ids.size(); ++i) {
    ASSERT_EQ(r_ids[i], perm[i]) << "store node " << i << " was source node " << perm[i];
    EXPECT_EQ(r_cls[i], a_cls[static_cast<size_t>(r_ids[i])]) << "the same node, the same class";
  }
  // --nodes FILE.npy names source ids.
  const std::vector<int64_t> wanted{5, 3, 399};
  write_npy(scratch_.file("nodes.npy"), DType::kInt64, {3}, wanted.data());
  auto f = predict("--checkpoint " + ckpt_ + " --data " + reordered + " --out " + scratch_.file("f") +
                   " --nodes " + scratch_.file("nodes.npy"));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(int64s(scratch_.file("f.node_ids.npy")), wanted);
  const auto f_cls = int64s(scratch_.file("f.class.npy"));
  for (size_t i = 0; i < wanted.size(); ++i) EXPECT_EQ(f_cls[i], a_cls[static_cast<size_t>(wanted[i])]);
}

// A partition folder as --data: the whole store it was made from is read,
// so a partitioned run's checkpoint predicts with the same command.
TEST_F(DgcnPredict, APartitionFolderPredictsOnTheStoreItWasMadeFrom) {
  trained();
  const std::string parts = partitioned();
  const std::string flags = " --checkpoint " + ckpt_ + " --nodes all --what class,logits --out ";
  auto whole = predict("--data " + data_ + flags + scratch_.file("w"));
  auto folder = predict("--data " + parts + flags + scratch_.file("f"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  EXPECT_NE(folder.err.find("reading the whole store it was made from, " + data_), std::string::npos)
      << folder.err;
  for (const char* part : {"node_ids", "class", "logits"}) {
    EXPECT_EQ(read_text(scratch_.file("w") + "." + part + ".npy"),
              read_text(scratch_.file("f") + "." + part + ".npy"))
        << part;
  }
}

TEST_F(DgcnPredict, BadInputsAreClearErrorsAndLeaveNothing) {
  trained();
  // A part file of a partitioned graph is not the whole graph.
  const std::string parts = partitioned();
  struct Case {
    std::string flags, message;
    int status;
  };
  const std::string base = "--data " + data_ + " --out " + scratch_.file("x") + " ";
  const std::vector<Case> cases = {
      {base + "--checkpoint " + ckpt_ + " --what class,colour", "'colour' is not an output", 2},
      {base + "--checkpoint " + ckpt_ + " --what embeddings --layer 2",
       "layer 2 has no embeddings: this model's hidden layers are 1..1", 1},
      {base + "--checkpoint " + scratch_.file("nowhere"), "no such file or folder", 1},
      {base + "--checkpoint " + data_, "is a .gcn graph store, not a checkpoint (pass it as --data", 1},
      {base + "--checkpoint " + ckpt_ + " --nodes " + scratch_.file("missing.npy"), "missing.npy", 1},
      {"--data " + data_ + " --checkpoint " + ckpt_ + " --out " + scratch_.file("none/x"),
       "dgcn-predict: error: --out " + scratch_.file("none/x") + ".node_ids.npy: the folder " +
           scratch_.file("none") + " does not exist",
       2},
      {"--data " + scratch_.file("ckpt/best.pt") + " --checkpoint " + ckpt_ + " --out " + scratch_.file("x"),
       "not a .gcn file", 1},
      {"--data " + parts + "/part-001.gcn --checkpoint " + ckpt_ + " --out " + scratch_.file("x"),
       "is part 1 of 2 of a partitioned graph", 1},
  };
  for (const Case& c : cases) {
    auto r = predict(c.flags);
    EXPECT_NE(r.err.find("dgcn-predict: error: "), std::string::npos) << "one shape: " << r.err;
    EXPECT_EQ(r.exit_code, c.status) << c.flags << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.flags << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.flags;
  }
  for (const auto& name : scratch_.entries()) {
    EXPECT_EQ(name.rfind("x.", 0), std::string::npos) << "left behind: " << name;
  }
}

}  // namespace
}  // namespace dgcn
