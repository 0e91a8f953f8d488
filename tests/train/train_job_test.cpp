#include "train/train_job.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "distributed/process_group.h"
#include "scratch_dir.h"
#include "tiny_job.h"
#include "train/start_gate.h"

namespace dgcn {
namespace {

using testing::tiny_job;

// Now, in seconds since the Unix epoch: the clock of the metrics' end_time.
double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(RunTrainJob, ReturnsTheSummaryItPrintsAndTheFilesItWrote) {
  testing::ScratchDir dir;
  TrainJobOptions job = tiny_job();
  job.metrics_out = dir.file("metrics.jsonl");
  auto group = ProcessGroup::create(RankEnv{}, {});
  int calls = 0;
  nlohmann::json seen;
  const double started = unix_now();
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
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u) << "the run's record, then one line per epoch";
  // Each epoch's end_time places it in the run: after the previous epoch's
  // end by at least its own training seconds.
  double previous_end = started;
  for (size_t i = 1; i < lines.size(); ++i) {
    const double end = lines[i]["end_time"], took = lines[i]["epoch_s"];
    EXPECT_GE(end - took, previous_end - 1e-3) << "epoch " << i;
    previous_end = end;
    // What the process used in the epoch, every thread: some work, no more
    // than every CPU busy all epoch long, the kernel's share a part of it.
    const double cpu = lines[i]["cpu_s"], system = lines[i]["system_s"];
    EXPECT_GT(cpu, 0) << "epoch " << i;
    EXPECT_LE(cpu, took * std::thread::hardware_concurrency() + 0.01) << "epoch " << i;
    EXPECT_GE(system, 0) << "epoch " << i;
    EXPECT_LE(system, cpu) << "epoch " << i;
    EXPECT_GE(lines[i]["minor_faults"].get<int64_t>(), 0) << "epoch " << i;
  }
  EXPECT_LE(previous_end, unix_now());
}

// --start-gate: the run is built, then waits; its first epoch starts after
// the gate opens (bench/python_epoch_bench.py --side-by-side starts two
// programs' first epochs together this way).
TEST(RunTrainJob, TheFirstEpochStartsWhenTheStartGateOpens) {
  testing::ScratchDir dir;
  TrainJobOptions job = tiny_job();
  job.metrics_out = dir.file("metrics.jsonl");
  job.start_gate = dir.file("go");
  auto group = ProcessGroup::create(RankEnv{}, {});
  TrainJobResult r;
  std::thread run([&] { r = run_train_job(job, *group); });
  const auto ready = start_gate_ready_file(job.start_gate);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(ready) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const bool arrived = std::filesystem::exists(ready);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double opened = unix_now();
  std::ofstream(job.start_gate).put('\n');
  run.join();
  group->shutdown();
  ASSERT_TRUE(arrived) << "the run never reached its gate";
  std::ifstream in(job.metrics_out);
  std::vector<nlohmann::json> epochs;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("epoch")) epochs.push_back(j);
  }
  ASSERT_EQ(epochs.size(), 2u);
  const double first_start = epochs[0]["end_time"].get<double>() - epochs[0]["epoch_s"].get<double>();
  EXPECT_GE(first_start, opened - 1e-3) << "the first epoch began before the gate opened";
}

std::vector<int64_t> epochs_of(const std::vector<CurvePoint>& curve) {
  std::vector<int64_t> out;
  for (const CurvePoint& p : curve) out.push_back(p.epoch);
  return out;
}

// --plot after --resume draws the whole run: the earlier epochs from the
// metrics file (as they were logged), then the resumed ones.
TEST(RunTrainJob, AResumedRunsCurveHoldsTheEpochsBeforeItsCheckpoint) {
  testing::ScratchDir dir;
  TrainJobOptions job = tiny_job();
  job.train.epochs = 3;
  job.checkpoint_dir = dir.file("ckpt");
  job.metrics_out = dir.file("metrics.jsonl");
  auto group = ProcessGroup::create(RankEnv{}, {});
  const TrainJobResult first = run_train_job(job, *group);
  ASSERT_EQ(epochs_of(first.curve), (std::vector<int64_t>{1, 2, 3}));
  job.train.epochs = 5;
  job.resume = true;
  const TrainJobResult resumed = run_train_job(job, *group);
  group->shutdown();
  ASSERT_EQ(epochs_of(resumed.curve), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(resumed.curve[i].loss, first.curve[i].loss) << "epoch " << i + 1;
    EXPECT_DOUBLE_EQ(resumed.curve[i].train, first.curve[i].train) << "epoch " << i + 1;
    EXPECT_EQ(resumed.curve[i].evaluated, first.curve[i].evaluated) << "epoch " << i + 1;
    EXPECT_DOUBLE_EQ(resumed.curve[i].valid, first.curve[i].valid) << "epoch " << i + 1;
  }
}

// Resumed in the middle of its last epoch, a run trains one epoch; its curve
// still starts at epoch 1 (the epochs before come from the metrics file).
TEST(RunTrainJob, AMidEpochResumeDrawsTheEarlierEpochsToo) {
  testing::ScratchDir dir;
  TrainJobOptions job = tiny_job();
  job.train.epochs = 3;
  job.checkpoint_dir = dir.file("ckpt");
  job.checkpoint_every_batches = 1;
  job.metrics_out = dir.file("metrics.jsonl");
  auto group = ProcessGroup::create(RankEnv{}, {});
  run_train_job(job, *group);
  // As if the run had stopped inside epoch 3: its end-of-epoch checkpoint is gone.
  std::filesystem::remove(dir.file("ckpt/checkpoint-000003.pt"));
  job.resume = true;
  const TrainJobResult resumed = run_train_job(job, *group);
  group->shutdown();
  EXPECT_EQ(resumed.summary["first_epoch"], 3) << "resumed inside epoch 3";
  EXPECT_EQ(epochs_of(resumed.curve), (std::vector<int64_t>{1, 2, 3}));
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
