// The DDP module's defining property: N ranks each training on their shard
// take the same steps as one process training on the union batch (same
// initial weights, mean loss), to float tolerance; and every rank holds
// identical parameters after every step. N = 1, 2, 4 over Gloo on localhost.
#include <gtest/gtest.h>

#include "worker.h"

namespace dgcn {
namespace {

using testing::run_worker;
using testing::ScratchDir;

constexpr double kTolerance = 1e-5;  // float32, a few SGD-with-momentum steps
constexpr int kSteps = 4;

void expect_equivalent(const testing::WorkerRun& run, int n, const std::string& label) {
  ASSERT_EQ(run.launch.exit_code, 0) << label << ": " << run.launch.message;
  for (int r = 0; r < n; ++r) {
    const auto& j = run.ranks[r];
    ASSERT_FALSE(j.is_null()) << label << ": rank " << r << " wrote nothing";
    const auto& diffs = j["max_abs_diff"];
    ASSERT_EQ(diffs.size(), kSteps + 1u);
    // After construction every rank holds rank 0's weights exactly.
    EXPECT_EQ(diffs[0].get<double>(), 0.0) << label << " rank " << r;
    for (size_t s = 1; s < diffs.size(); ++s) {
      EXPECT_LT(diffs[s].get<double>(), kTolerance) << label << " rank " << r << " step " << s;
    }
    // Bit-identical replicas after every step.
    EXPECT_EQ(j["digests"], run.ranks[0]["digests"]) << label << " rank " << r;
    EXPECT_EQ(j["syncs"], kSteps) << label;
  }
  std::cout << "[ ddp ] " << label
            << " max |param - reference| per step on rank 0: " << run.ranks[0]["max_abs_diff"].dump() << "\n";
}

TEST(Ddp, ShardsEqualUnionBatch) {
  // Several small buckets for N = 1, 2, 4 (the harder case); one default
  // bucket for N = 2.
  for (int n : {1, 2, 4}) {
    for (bool small : {false, true}) {
      if (!small && n != 2) continue;
      ScratchDir out;
      std::vector<std::string> args = {"ddp", "--variant", "plain", "--steps", std::to_string(kSteps)};
      if (small) args.push_back("--small-buckets");
      auto run = run_worker(n, args, out);
      std::string label = "n=" + std::to_string(n) + (small ? " small buckets" : " default buckets");
      expect_equivalent(run, n, label);
      if (run.ranks[0].is_null()) continue;
      const auto& j = run.ranks[0];
      if (small) {
        EXPECT_EQ(j["buckets"], 4) << label;
        // fc3/fc2/fc1 fill buckets 0 and 1 during backward: their all-reduces
        // start from the hooks, before backward has returned.
        EXPECT_EQ(j["launched_during_backward"], 2 * kSteps) << label;
        EXPECT_EQ(j["buckets_launched"], 4 * kSteps) << label;
      } else {
        EXPECT_EQ(j["buckets"], 1) << label;
      }
    }
  }
}

TEST(Ddp, ParametersUnusedOnSomeRanksDoNotHang) {
  for (int n : {2, 4}) {
    ScratchDir out;
    auto run = run_worker(
        n, {"ddp", "--variant", "unused", "--small-buckets", "--steps", std::to_string(kSteps)}, out);
    expect_equivalent(run, n, "unused n=" + std::to_string(n));
    for (int r = 0; r < n && !run.ranks[r].is_null(); ++r) {
      // Used on rank 0 only: every rank gets the average. Used nowhere: untouched.
      EXPECT_TRUE(run.ranks[r]["extra_grad_defined"].get<bool>()) << "rank " << r;
      EXPECT_FALSE(run.ranks[r]["never_grad_defined"].get<bool>()) << "rank " << r;
    }
  }
}

TEST(Ddp, NoSyncAccumulatesThenAveragesOnce) {
  for (int n : {1, 2}) {
    ScratchDir out;
    auto run = run_worker(
        n, {"ddp", "--variant", "nosync", "--small-buckets", "--steps", std::to_string(kSteps)}, out);
    expect_equivalent(run, n, "nosync n=" + std::to_string(n));
  }
}

// Checked replicas (distributed/replica_check.h): a rank with another model
// or other data stops every rank before the first broadcast, with the same
// message naming the rank, the field and both values, long before the
// collective timeout.
TEST(Ddp, RanksWithAnotherModelOrOtherDataStopBeforeTraining) {
  {
    ScratchDir out;
    auto run = run_worker(2, {"replicas", "--variant", "same"}, out);
    ASSERT_EQ(run.launch.exit_code, 0) << run.launch.message;
    EXPECT_TRUE(run.ranks[1]["checked"].get<bool>());
  }
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"shape",
       {"rank 1 has param fc2.weight = \"[33, 32] Float\" where rank 0 has \"[32, 32] Float\"",
        "rank 1 has param wide.weight = \"[4, 33] Float\" where rank 0 has none"}},
      {"setting", {"rank 1 has data.digest = \"9a9a9a9a\" where rank 0 has \"1f1f1f1f\""}},
  };
  for (const auto& [variant, expected] : cases) {
    ScratchDir out;
    auto run = run_worker(2, {"replicas", "--variant", variant}, out);
    EXPECT_NE(run.launch.exit_code, 0) << variant;
    EXPECT_LT(run.seconds, 15) << variant << ": the check must not wait for the 20 s timeout";
    for (int r = 0; r < 2; ++r) {
      ASSERT_FALSE(run.ranks[r].is_null()) << variant << ": rank " << r << " wrote no error";
      const std::string error = run.ranks[r]["error"];
      EXPECT_EQ(error, run.ranks[0]["error"].get<std::string>())
          << variant << ": the same message on every rank";
      for (const auto& text : expected)
        EXPECT_NE(error.find(text), std::string::npos) << variant << ": " << error;
    }
    std::cout << "[ replicas ] " << variant << ": " << run.ranks[0]["error"].get<std::string>() << "\n";
  }
}

}  // namespace
}  // namespace dgcn
