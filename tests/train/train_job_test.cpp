#include "train/train_job.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/error.h"
#include "distributed/process_group.h"
#include "scratch_dir.h"
#include "tiny_job.h"

namespace dgcn {
namespace {

using testing::tiny_job;

TEST(RunTrainJob, ReturnsTheSummaryItPrintsAndTheFilesItWrote) {
  testing::ScratchDir dir;
  TrainJobOptions job = tiny_job();
  job.metrics_out = dir.file("metrics.jsonl");
  auto group = ProcessGroup::create(RankEnv{}, {});
  int calls = 0;
  nlohmann::json seen;
  const TrainJobResult r = run_train_job(job, *group, [&](const nlohmann::json& s) {
    ++calls;
    seen = s;
  });
  group->shutdown();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, r.summary);
  EXPECT_EQ(r.summary["data"], "synthetic:tiny");
  EXPECT_EQ(r.summary["epochs"], 2);
  EXPECT_EQ(r.summary["param_digest"], r.train.param_digest);
  EXPECT_FALSE(r.train.param_digest.empty());
  EXPECT_EQ(r.summary["config"]["model"]["fanouts"], nlohmann::json({5, 5}));
  ASSERT_EQ(r.files_written, std::vector<std::string>{job.metrics_out});
  std::ifstream in(job.metrics_out);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) EXPECT_NO_THROW((void)nlohmann::json::parse(line));
  EXPECT_EQ(lines, 3) << "the run's record, then one line per epoch";
}

TEST(RunTrainJob, TheSameOptionsGiveTheSameModel) {
  std::vector<std::string> digests;
  for (int i = 0; i < 2; ++i) {
    auto group = ProcessGroup::create(RankEnv{}, {});
    digests.push_back(run_train_job(tiny_job(), *group).train.param_digest);
    group->shutdown();
  }
  EXPECT_EQ(digests[0], digests[1]);
}

TEST(RunTrainJob, ASeedModeNeedsAPartitionedGraph) {
  TrainJobOptions job = tiny_job();
  job.seeds = SeedMode::kGlobal;
  auto group = ProcessGroup::create(RankEnv{}, {});
  try {
    run_train_job(job, *group);
    FAIL() << "seed modes are for partitioned graphs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("partitioned graph"), std::string::npos) << e.what();
  }
  group->shutdown();
}

}  // namespace
}  // namespace dgcn
