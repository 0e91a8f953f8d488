// dgcn-train on a partitioned graph (dgcn-train --data DIR): with --seeds
// global it is the replicated run bit for bit, on 2 and 4 ranks; --seeds
// local trains each rank on its own part; a missing, foreign or damaged part
// stops every rank naming the rank, quickly.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/timing.h"
#include "fixtures.h"
#include "json_output.h"
#include "partition/partition_files.h"
#include "run_command.h"
#include "train_runs.h"

namespace dgcn {
namespace {

using nlohmann::json;
using testing::json_lines;
using testing::summary_of;

class DgcnTrainPartitioned : public testing::DgcnTrainRuns {
 protected:
  // The community store partitioned into `parts` in the folder `name`.
  std::string partition(const std::string& name, int parts, PartitionMethod method,
                        const GraphStore* store = nullptr) {
    const std::string dir = scratch_.file(name);
    WritePartitionOptions o;
    o.partition = {.parts = parts, .method = method, .seed = 1, .threads = 1};
    write_partition(store ? *store : load_store(data_), dir, o);
    return dir;
  }
  // The per-epoch lines of a metrics file (after the record line).
  std::vector<json> epochs_of(const std::string& metrics) {
    auto lines = json_lines(testing::read_text(metrics));
    return {lines.begin() + 1, lines.end()};
  }
};

// The property that counts: with --seeds global a partitioned run's batches,
// losses, weights and evaluation are the replicated run's, bit for bit.
TEST_F(DgcnTrainPartitioned, GlobalSeedsGiveTheReplicatedRunBitForBitOnTwoAndFourRanks) {
  for (int ranks : {2, 4}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const std::string dir = partition("parts" + std::to_string(ranks), ranks,
                                      ranks == 2 ? PartitionMethod::kMetis : PartitionMethod::kRandom);
    const std::string flags = " --epochs 3 --nproc-per-node " + std::to_string(ranks);
    // One file per run: a fresh run refuses a metrics file that holds lines.
    const std::string replicated_metrics = scratch_.file("replicated" + std::to_string(ranks) + ".jsonl");
    const std::string partitioned_metrics = scratch_.file("partitioned" + std::to_string(ranks) + ".jsonl");
    auto replicated = train(flags + " --metrics-out " + replicated_metrics);
    ASSERT_EQ(replicated.exit_code, 0) << replicated.err;
    auto partitioned = run_command(testing::kTrain + " --data " + dir +
                                       " --num-neighbors 5,5 --batch-size 32 --hidden 16 --lr 0.02 --threads "
                                       "1 --workers 1 --cpu-cache-gb 0 "
                                       "--seed 1 --timeout 30 --seeds global --metrics-out " +
                                       partitioned_metrics + flags,
                                   scratch_);
    ASSERT_EQ(partitioned.exit_code, 0) << partitioned.err;
    const json a = summary_of(replicated), b = summary_of(partitioned);
    EXPECT_EQ(a["param_digest"], b["param_digest"]);
    EXPECT_EQ(a["valid_acc"], b["valid_acc"]);
    EXPECT_EQ(a["test_acc"], b["test_acc"]);
    EXPECT_EQ(a["config"]["data"]["digest"], b["config"]["data"]["digest"]) << "the same data, split or not";
    EXPECT_EQ(b["config"]["run"]["seeds"], "global");
    const auto ea = epochs_of(replicated_metrics), eb = epochs_of(partitioned_metrics);
    ASSERT_EQ(ea.size(), 3u);
    ASSERT_EQ(eb.size(), 3u);
    for (size_t e = 0; e < 3; ++e) {
      EXPECT_EQ(ea[e]["loss"], eb[e]["loss"]) << "epoch " << e + 1;
      EXPECT_EQ(ea[e]["train_acc"], eb[e]["train_acc"]);
      EXPECT_EQ(ea[e]["valid_acc"], eb[e]["valid_acc"]);
      EXPECT_EQ(ea[e]["batches"], eb[e]["batches"]);
      // What moved between ranks was counted.
      EXPECT_GT(eb[e]["exchange"]["feature_bytes"].get<double>(), 0) << eb[e];
      EXPECT_GT(eb[e]["exchange"]["id_bytes"].get<double>(), 0);
      EXPECT_GT(eb[e]["exchange"]["pick_bytes"].get<double>(), 0);
    }
    // Each rank held its part only.
    for (int r = 0; r < ranks; ++r) {
      EXPECT_LT(b["memory"]["graph_bytes"][r].get<double>(),
                0.75 * a["memory"]["graph_bytes"][r].get<double>())
          << b["memory"];
    }
  }
}

TEST_F(DgcnTrainPartitioned, LocalSeedsTrainEachRankOnItsOwnPart) {
  const std::string dir = partition("parts", 2, PartitionMethod::kMetis);
  const std::string metrics = scratch_.file("local.jsonl");
  auto r = run_command(testing::kTrain + " --data " + dir +
                           " --num-neighbors 5,5 --batch-size 32 --hidden 16 --lr 0.02 --threads 1 --seed 1 "
                           "--timeout 30 --epochs 4 --nproc-per-node 2 --metrics-out " +
                           metrics,
                       scratch_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json s = summary_of(r);
  EXPECT_EQ(s["config"]["run"]["seeds"], "local") << "the default on a partitioned graph";
  EXPECT_GT(s["test_acc"].get<double>(), 0.6) << "4 classes: chance is 0.25";
  const PartitionManifest m = read_partition_manifest(dir);
  const int64_t largest = std::max(m.files[0].train, m.files[1].train);
  for (const json& e : epochs_of(metrics)) EXPECT_EQ(e["batches"], (largest + 31) / 32) << e;
}

TEST_F(DgcnTrainPartitioned, AnInEpochCheckpointResumesWithTheNextBatch) {
  // 4 batches per rank and epoch (as the replicated run): a checkpoint after batch 3 of each.
  const std::string dir = partition("parts", 2, PartitionMethod::kRandom);
  const std::string a = scratch_.file("ckpt-a"), b = scratch_.file("ckpt-b");
  const std::string base =
      testing::kTrain + " --data " + dir +
      " --num-neighbors 5,5 --batch-size 32 --hidden 16 --lr 0.02 --threads 1 --seed 1 "
      "--timeout 30 --epochs 2 --nproc-per-node 2 --seeds global --checkpoint-every-batches 3 "
      "--checkpoint ";
  auto full = run_command(base + a, scratch_);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  // What a kill after batch 3 of epoch 2 leaves.
  std::filesystem::create_directories(b);
  std::filesystem::copy_file(a + "/checkpoint-000002-b000003.pt", b + "/checkpoint-000002-b000003.pt");
  auto rest = run_command(base + b + " --resume", scratch_);
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_NE(rest.err.find("resume: continuing after batch 3 of epoch 2"), std::string::npos) << rest.err;
  EXPECT_EQ(summary_of(rest)["param_digest"], summary_of(full)["param_digest"]);
}

// A bad part is an error on every rank naming the rank and why, long
// before the collective timeout (--timeout 30).
TEST_F(DgcnTrainPartitioned, ABadPartStopsEveryRankNamingTheRank) {
  const std::string good = partition("good", 2, PartitionMethod::kMetis);
  const std::string other = partition("other", 2, PartitionMethod::kRandom);
  auto run_on = [&](const std::string& dir, int ranks) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_command(
        testing::kTrain + " --data " + dir +
            " --num-neighbors 5,5 --batch-size 32 --hidden 16 --threads 1 --epochs 1 --timeout 30 "
            "--nproc-per-node " +
            std::to_string(ranks),
        scratch_);
    const double seconds = seconds_since(t0);
    EXPECT_LT(seconds, 20) << "no rank waited for the collective timeout";
    return r;
  };
  auto copy_of_good = [&](const std::string& name) {
    const std::string dir = scratch_.file(name);
    std::filesystem::copy(good, dir);
    return dir;
  };
  auto expect_error = [](const testing::CommandResult& r, const std::string& what) {
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    // Both ranks say it, rank 0 (whose part is fine) too, unless the
    // launcher stopped it first: at least the failing rank's line.
    const std::string line = "dgcn-train: error: loading the partitioned graph failed on rank 1: ";
    size_t count = 0;
    for (size_t at = r.err.find(line); at != std::string::npos; at = r.err.find(line, at + 1)) ++count;
    EXPECT_GE(count, 1u) << r.err;
  };

  const std::string missing = copy_of_good("missing");
  std::filesystem::remove(missing + "/part-001.gcn");
  expect_error(run_on(missing, 2), "part-001.gcn");

  const std::string foreign = copy_of_good("foreign");
  std::filesystem::copy_file(other + "/part-001.gcn", foreign + "/part-001.gcn",
                             std::filesystem::copy_options::overwrite_existing);
  expect_error(run_on(foreign, 2), "comes from another partition run");

  const std::string damaged = copy_of_good("damaged");
  std::vector<char> bytes = testing::read_bytes(damaged + "/part-001.gcn");
  bytes[bytes.size() - 64] ^= 0x01;
  testing::write_bytes(damaged + "/part-001.gcn", bytes);
  expect_error(run_on(damaged, 2), "checksum");

  auto r = run_on(good, 3);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("is partitioned into 2 parts but the job has 3 ranks"), std::string::npos) << r.err;
}

TEST_F(DgcnTrainPartitioned, OptionsThatDoNotFitAreClearErrors) {
  auto r = train("--seeds local --epochs 1");
  EXPECT_EQ(r.exit_code, 2) << "a usage error";
  EXPECT_NE(r.err.find("--seeds local: seeds are chosen per rank on a partitioned graph"), std::string::npos)
      << r.err;
  const std::string dir = partition("parts", 1, PartitionMethod::kRandom);
  r = run_command(testing::kTrain + " --data " + dir + " --eval sampled --epochs 1 --threads 1", scratch_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--eval sampled is not available on a partitioned graph"), std::string::npos) << r.err;
  r = run_command(testing::kTrain + " --data " + dir + " --seeds everywhere", scratch_);
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace dgcn
