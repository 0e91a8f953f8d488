// dgcn-spmm-bench as a user runs it, on a tiny block: one JSON object whose
// bandwidth figures are ordered as their definitions demand, and a clear
// error for inconsistent options (dgcn-gnn-bench's too: the same flags).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.h"
#include "json_output.h"
#include "run_command.h"

namespace dgcn {
namespace {

const std::string kBench = DGCN_SPMM_BENCH_BIN;
const std::string kGnnBench = DGCN_GNN_BENCH_BIN;

TEST(SpmmBenchApp, PrintsConsistentBandwidthFigures) {
  testing::ScratchDir scratch;
  const auto run = testing::run_command(
      kBench + " --batch-size 64 --reps 2 --stream-mb 8 --threads 1 --features 100", scratch);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = testing::summary_of(run);
  ASSERT_TRUE(j.is_object()) << run.out;
  EXPECT_EQ(j["benchmark"], "spmm");
  EXPECT_GT(j["stream"]["copy_gbs"].get<double>(), 0);
  const auto& fwd = j["forward"];
  // Every entry reads a row, rows repeat, and rows cover whole cache lines:
  // compulsory <= gathered <= line traffic, for the same time.
  const double compulsory = fwd["compulsory_gbs"], gathered = fwd["gathered_gbs"];
  const double lines = fwd["line_traffic_gbs"];
  EXPECT_GT(compulsory, 0);
  EXPECT_LE(compulsory, gathered);
  EXPECT_LE(gathered, lines);
  // bf16 rows are half the bytes: the same bounds on its own byte counts.
  const auto& bf16 = j["forward_bf16"];
  const double bf16_compulsory = bf16["compulsory_gbs"], bf16_gathered = bf16["gathered_gbs"];
  EXPECT_GT(bf16_compulsory, 0);
  EXPECT_LE(bf16_compulsory, bf16_gathered);
  EXPECT_LE(bf16_gathered, bf16["line_traffic_gbs"].get<double>());
  EXPECT_GT(bf16["speedup_vs_fp32"].get<double>(), 0);
  EXPECT_GT(j["train_step"]["total_ms"].get<double>(), 0);
  EXPECT_EQ(j["block"]["features"], 100);
}

TEST(SpmmBenchApp, RejectsMismatchedOptions) {
  testing::ScratchDir scratch;
  const auto run = testing::run_command(kBench + " --num-neighbors 5,5 --new-fraction 0.5", scratch);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--new-fraction needs one value per fanout"), std::string::npos) << run.err;
}

// dgcn-gnn-bench takes the same batch flags (bench/products_batch_cli.h) and
// refuses the same mismatch before it builds a batch.
TEST(GnnBenchApp, RejectsMismatchedOptions) {
  testing::ScratchDir scratch;
  const auto run = testing::run_command(kGnnBench + " --num-neighbors 5,5,5 --new-fraction 0.5,0.5", scratch);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--new-fraction needs one value per fanout of --num-neighbors (3)"),
            std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace dgcn
