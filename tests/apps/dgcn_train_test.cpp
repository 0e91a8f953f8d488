// dgcn-train end to end on a small .gcn store: 2 ranks through the built-in
// launcher, the distributed evaluation against one process, checkpoints and
// resume, a killed rank, two "nodes" on loopback, torchrun, torch.load.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "base/timing.h"
#include "distributed/launcher.h"
#include "fixtures.h"
#include "graph/store_format.h"
#include "json_output.h"
#include "process_probe.h"
#include "run_command.h"
#include "train_runs.h"

namespace dgcn {
namespace {

using nlohmann::json;
using testing::CommandResult;
using testing::json_lines;
using testing::kTrain;
using testing::run_command;
using testing::ScratchDir;
using testing::summary_of;

// The checkpoint files in `dir` whose writing has ended (temporaries, named
// checkpoint-N.pt.tmp-..., are not counted).
std::vector<std::string> finished_checkpoints(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("checkpoint-", 0) == 0 && name.size() > 3 && name.substr(name.size() - 3) == ".pt") {
      out.push_back(name);
    }
  }
  return out;
}

// rank -> the param_digest that rank logged ("[rank R] ... param_digest D").
std::map<int, std::string> logged_digests(const std::string& err) {
  std::map<int, std::string> out;
  static const std::regex line(R"(\[rank (\d+)\].*param_digest ([0-9a-f]{16}))");
  for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it) {
    out[std::stoi((*it)[1])] = (*it)[2];
  }
  return out;
}

// The summary of a run that must succeed: exit status 0 and a JSON object
// holding each of `keys`. Anything else fails the test naming what is
// wrong, so a run that crashed or printed nothing cannot pass as a summary
// whose every field is null.
json summary_of_success(const CommandResult& r, std::initializer_list<const char*> keys) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json s = summary_of(r);
  EXPECT_TRUE(s.is_object()) << "no JSON summary on stdout: " << r.out << r.err;
  if (!s.is_object()) return json::object();
  for (const char* key : keys) EXPECT_TRUE(s.contains(key)) << "the summary has no " << key << ": " << s;
  return s;
}

using DgcnTrain = testing::DgcnTrainRuns;

TEST_F(DgcnTrain, TwoRanksAgreeAndRankZeroWritesTheMetrics) {
  const std::string metrics = scratch_.file("metrics.jsonl");
  auto r = train("--epochs 4 --nproc-per-node 2 --metrics-out " + metrics);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << "rank 0 prints the summary, rank 1 nothing: " << r.out;
  const json& s = lines[0];
  EXPECT_EQ(s["world_size"], 2);
  EXPECT_EQ(s["backend"], "gloo");
  EXPECT_EQ(s["epochs"], 4);
  EXPECT_GT(s["test_acc"].get<double>(), 0.6) << "4 classes: chance is 0.25";
  // Both replicas end bit-identical (train_gcn also checks it collectively).
  auto digests = logged_digests(r.err);
  ASSERT_EQ(digests.size(), 2u) << r.err;
  EXPECT_EQ(digests[0], s["param_digest"]);
  EXPECT_EQ(digests[1], s["param_digest"]);
  // Every rank's memory (this graph's tensors are below the caching
  // allocator's 1 MiB, so it maps nothing here; CpuAllocator.* test it).
  const json& memory = s["memory"];
  ASSERT_EQ(memory["peak_rss_bytes"].size(), 2u) << memory;
  ASSERT_EQ(memory["cpu_cache_peak_mapped_bytes"].size(), 2u) << memory;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_LT(memory["cpu_cache_peak_mapped_bytes"][rank].get<double>(),
              memory["peak_rss_bytes"][rank].get<double>())
        << memory;
  }

  auto metric_lines = json_lines(testing::read_text(metrics));
  ASSERT_EQ(metric_lines.size(), 5u) << "the run's record, then one line per epoch";
  EXPECT_EQ(metric_lines[0]["config"], s["config"]);
  EXPECT_EQ(metric_lines[0]["first_epoch"], 1);
  const std::vector<json> epochs(metric_lines.begin() + 1, metric_lines.end());
  for (int e = 0; e < 4; ++e) {
    EXPECT_EQ(epochs[e]["epoch"], e + 1) << "epochs count from 1";
    EXPECT_EQ(epochs[e]["batches"], 4) << "100 seeds per rank in batches of 32";
    EXPECT_TRUE(epochs[e].contains("valid_acc")) << epochs[e];
  }
  EXPECT_LT(epochs[3]["loss"].get<double>(), epochs[0]["loss"].get<double>());
  EXPECT_EQ(epochs[3]["test_acc"], s["test_acc"]);
  EXPECT_FALSE(std::filesystem::exists(metrics + ".tmp"));

  // Timing runs: no evaluation, so no metrics in the summary.
  json timing = summary_of_success(train("--epochs 1 --eval none --nproc-per-node 2"),
                                   {"param_digest", "valid_acc", "best_valid_acc", "best_epoch"});
  EXPECT_TRUE(timing["valid_acc"].is_null() && timing["best_valid_acc"].is_null()) << timing;
  EXPECT_TRUE(timing["best_epoch"].is_null()) << timing;
}

TEST_F(DgcnTrain, RanksOfOneMachineMapOneSharedCache) {
  // Two local ranks (auto: shared) expand the store once into the cache dir
  // and map it; training on the mapped store equals private copies.
  // Every section compressed, so a mapping needs the expanded cache.
  SaveOptions compress_all;
  compress_all.zstd_min_bytes = 0;
  save_store(testing::community_store(), data_, compress_all);
  const std::string cache = scratch_.file("cache");
  std::filesystem::create_directories(cache);
  json shared =
      summary_of_success(train("--epochs 1 --nproc-per-node 2 --cache-dir " + cache), {"param_digest"});
  json priv = summary_of_success(train("--epochs 1 --nproc-per-node 2 --load private"), {"param_digest"});
  EXPECT_EQ(shared["param_digest"], priv["param_digest"]);
  int caches = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache)) {
    caches += entry.path().extension() == ".cache";
  }
  EXPECT_EQ(caches, 1) << "one decompressed cache for both ranks";
}

TEST_F(DgcnTrain, FirstLayerReadingTheStoreEqualsGatheringInTheLoader) {
  // Note [Input gather], through the app: two ranks on the shared mapping.
  json from_store = summary_of_success(train("--epochs 2 --nproc-per-node 2"), {"param_digest", "test_acc"});
  json gathered = summary_of_success(train("--epochs 2 --nproc-per-node 2 --gather-in-loader"),
                                     {"param_digest", "test_acc"});
  EXPECT_EQ(from_store["param_digest"], gathered["param_digest"]);
  EXPECT_EQ(from_store["test_acc"], gathered["test_acc"]);
}

TEST(DgcnTrainSynthetic, AGcnClearlyBeatsAFeaturesOnlyModelOnTheTinyPreset) {
  // The synthetic generator hides part of the label in the neighbourhood
  // (misleading nodes: features of another class, edges true to their own),
  // so reading neighbours must pay. 0 hops with --norm block is an MLP on
  // each node's own features (a self-loop of weight 1 per layer).
  const std::string common =
      kTrain + " --preset tiny --batch-size 256 --epochs 20 --eval-every 20 --seed 1 --threads 1 ";
  ScratchDir scratch;
  auto gcn = run_command(common + "--num-neighbors 10,10", scratch);
  auto mlp = run_command(common + "--num-neighbors 0,0 --norm block --eval sampled", scratch);
  ASSERT_EQ(gcn.exit_code, 0) << gcn.err;
  ASSERT_EQ(mlp.exit_code, 0) << mlp.err;
  const double gcn_acc = summary_of(gcn)["test_acc"];
  const double mlp_acc = summary_of(mlp)["test_acc"];
  EXPECT_GT(gcn_acc, mlp_acc + 0.1) << "GCN " << gcn_acc << " vs features only " << mlp_acc;
}

// Note [Results independent of the thread count]: the same seed gives the
// same weights at 1 and 2 compute threads (MKL's reductions in a fixed
// order), so a resume may change --threads.
TEST(DgcnTrainSynthetic, TheModelDoesNotDependOnTheThreadCount) {
  const std::string common = kTrain + " --preset tiny --epochs 1 --max-batches 5 --eval none --seed 3 ";
  ScratchDir scratch;
  auto one = run_command(common + "--threads 1", scratch);
  auto two = run_command(common + "--threads 2", scratch);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(summary_of(one)["param_digest"], summary_of(two)["param_digest"]);
}

TEST_F(DgcnTrain, TwoRankEvaluationEqualsOneProcessEvaluatingTheSameWeights) {
  // Each rank scores half of the valid/test nodes and the counts are summed
  // (correct/total; TP/FP/FN for multi-label F1); one process resuming the
  // final checkpoint trains nothing and scores all of them.
  for (Task task : {Task::kSingleLabel, Task::kMultiLabel}) {
    const std::string metric = task == Task::kSingleLabel ? "acc" : "f1";
    save_store(testing::community_store(task), data_);
    const std::string ckpt = scratch_.file("ckpt-" + metric);
    auto two = train("--epochs 2 --nproc-per-node 2 --checkpoint " + ckpt);
    ASSERT_EQ(two.exit_code, 0) << two.err;
    auto one = train("--epochs 2 --checkpoint " + ckpt + " --resume");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    json a = summary_of(two), b = summary_of(one);
    EXPECT_EQ(b["world_size"], 1);
    EXPECT_EQ(b["first_epoch"], 3) << "two epochs done: nothing left to train";
    EXPECT_EQ(b["param_digest"], a["param_digest"]);
    ASSERT_TRUE(a.contains("valid_" + metric)) << a;
    EXPECT_GT(a["valid_" + metric].get<double>(), 0.0) << a;
    EXPECT_EQ(b["valid_" + metric], a["valid_" + metric]) << metric;
    EXPECT_EQ(b["test_" + metric], a["test_" + metric]) << metric;
    // The best-validation record came through the checkpoint.
    EXPECT_EQ(b["best_epoch"], a["best_epoch"]);
    EXPECT_EQ(b["best_valid_" + metric], a["best_valid_" + metric]);
  }
}

TEST_F(DgcnTrain, ResumeEqualsAnUninterruptedRun) {
  // Adam state, dropout (0.5) and sampling all continue exactly (Note
  // [Trainer randomness]).
  const std::string a = scratch_.file("ckpt-a"), b = scratch_.file("ckpt-b");
  auto full = train("--epochs 3 --nproc-per-node 2 --checkpoint " + a);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  std::vector<std::string> kept;
  for (const auto& e : std::filesystem::directory_iterator(a)) kept.push_back(e.path().filename().string());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{"best.pt", "checkpoint-000002.pt", "checkpoint-000003.pt"}));
  auto first = train("--epochs 1 --nproc-per-node 2 --checkpoint " + b);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto rest = train("--epochs 3 --nproc-per-node 2 --checkpoint " + b + " --resume");
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  json f = summary_of(full), r = summary_of(rest);
  EXPECT_EQ(r["first_epoch"], 2);
  EXPECT_EQ(r["epochs"], 3);
  EXPECT_EQ(r["param_digest"], f["param_digest"]);
  EXPECT_EQ(r["test_acc"], f["test_acc"]);
  EXPECT_EQ(r["best_epoch"], f["best_epoch"]);

  auto other_seed = train("--epochs 4 --seed 2 --checkpoint " + b + " --resume");
  EXPECT_EQ(other_seed.exit_code, 1);
  EXPECT_NE(other_seed.err.find("belongs to another run: seed was 1, this run has 2"), std::string::npos)
      << other_seed.err;
}

// Ctrl-C ends the run with a line naming the last good checkpoint and the
// command that resumes from it; that command works.
TEST_F(DgcnTrain, CtrlCNamesTheLastGoodCheckpointAndTheResumeCommand) {
  const std::string ckpt = scratch_.file("ckpt"), err = scratch_.file("int.err");
  const pid_t run = testing::spawn_shell(command("--epochs 500 --checkpoint " + ckpt) + " 2>" + err);
  // Two finished checkpoints: the writer thread has named the first in the
  // interrupt note before it began the second (a file alone is not enough:
  // the note is set just after the rename, and a temporary shares the prefix).
  auto checkpointed = [&] { return finished_checkpoints(ckpt).size() >= 2; };
  ASSERT_TRUE(testing::wait_until(checkpointed, std::chrono::seconds(60))) << testing::read_text(err);
  ASSERT_EQ(kill(run, SIGINT), 0);
  EXPECT_EQ(testing::wait_exit_code(run), 128 + SIGINT);
  const std::string log = testing::read_text(err);
  const std::string line = "dgcn-train: interrupted; the last good checkpoint is " + ckpt + "/checkpoint-";
  const size_t at = log.find(line);
  ASSERT_NE(at, std::string::npos) << log;
  const std::string named = log.substr(at + line.size() - ckpt.size() - 12, ckpt.size() + 21);
  EXPECT_TRUE(std::filesystem::exists(named)) << named << " is not there: " << log;
  const size_t resume = log.find("; resume with: ", at);
  ASSERT_NE(resume, std::string::npos) << log;
  const std::string again = log.substr(resume + 15, log.find('\n', resume) - resume - 15);
  EXPECT_NE(again.find("--checkpoint " + ckpt), std::string::npos) << again;
  EXPECT_EQ(again.substr(again.size() - 9), " --resume") << again;
}

// Every rank finds the store damaged; the user reads it once (Note [One
// error per job] in base/error_report.h), and the launcher's own line.
TEST_F(DgcnTrain, AnErrorEveryRankHitsIsPrintedOnce) {
  const std::string bad = scratch_.file("cut.gcn");
  {
    std::ifstream in(data_, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(bad, std::ios::binary) << head;
  }
  auto r = run_command(kTrain + " --data " + bad + " --nproc-per-node 2 --epochs 1 --threads 1 --timeout 30",
                       scratch_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  size_t lines = 0;
  for (size_t at = r.err.find("dgcn-train: error: "); at != std::string::npos;
       at = r.err.find("dgcn-train: error: ", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << r.err;
  EXPECT_NE(r.err.find("header says the file has"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("launcher: rank "), std::string::npos) << r.err;
}

TEST_F(DgcnTrain, AKilledRankStopsTheJobNamingTheRank) {
  // Rank 1 dies by SIGKILL from outside, as a crash would, once an epoch has
  // ended (rank 0 has written a checkpoint; older ones are removed as newer
  // ones come, so any of them counts).
  const std::string ckpt = scratch_.file("ckpt"), out = scratch_.file("kill.out"),
                    err = scratch_.file("kill.err");
  const auto start = std::chrono::steady_clock::now();
  const pid_t launcher =
      testing::spawn_shell(command("--epochs 500 --nproc-per-node 2 --timeout 20 --checkpoint " + ckpt) +
                           " >" + out + " 2>" + err);
  auto checkpointed = [&] { return !finished_checkpoints(ckpt).empty(); };
  ASSERT_TRUE(testing::wait_until(checkpointed, std::chrono::seconds(60))) << testing::read_text(err);
  pid_t victim = -1;
  for (pid_t child : testing::children_of(launcher)) {
    if (testing::environment_of(child, "RANK") == "1") victim = child;
  }
  ASSERT_GT(victim, 0) << "no rank 1 among the launcher's children";
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  const int exit_code = testing::wait_exit_code(launcher);
  const double seconds = seconds_since(killed);
  const std::string log = testing::read_text(err);
  EXPECT_EQ(exit_code, 128 + 9) << log;
  EXPECT_NE(log.find("rank 1 (pid " + std::to_string(victim) + ")"), std::string::npos) << log;
  EXPECT_NE(log.find("killed by signal 9"), std::string::npos) << log;
  EXPECT_TRUE(testing::read_text(out).empty()) << "no summary from a failed job";
  // The launcher stops rank 0 at once instead of letting its all-reduce time out.
  EXPECT_LT(seconds, 15) << log;
  std::cerr << "kill-a-rank: launcher returned " << seconds << " s after the kill ("
            << std::chrono::duration<double>(killed - start).count() << " s into the run)\n";
}

// The property restarts exist for (Note [Restarts]): a rank (0, which
// hosts the store and writes the checkpoints, or 1) killed by SIGKILL at a
// random moment, the job restarted once, ends with the same parameters as a
// run that was never interrupted.
TEST_F(DgcnTrain, ARankKilledAtARandomMomentIsRestartedAndEndsWithTheSameDigest) {
  auto full = train("--epochs 30 --nproc-per-node 2");
  ASSERT_EQ(full.exit_code, 0) << full.err;

  // The moment: after a random number of epochs' checkpoints (0: during the
  // ranks' start-up), plus a random part of an epoch. Counted by progress,
  // not by the clock, so a loaded machine moves it but cannot skip it.
  // The draw's seed is printed first (and named in every failure), so a
  // failing moment can be run again: DGCN_RESTART_TEST_SEED=<seed>.
  const char* fixed = std::getenv("DGCN_RESTART_TEST_SEED");
  const uint32_t seed = fixed != nullptr ? static_cast<uint32_t>(std::stoul(fixed)) : std::random_device{}();
  std::cerr << "restart: seed " << seed << " (repeat this draw with DGCN_RESTART_TEST_SEED=" << seed << ")\n";
  SCOPED_TRACE("DGCN_RESTART_TEST_SEED=" + std::to_string(seed));
  std::mt19937 rng(seed);
  const int epochs_before = std::uniform_int_distribution<int>(0, 24)(rng);
  const double extra_s = std::uniform_real_distribution<double>(0.0, epochs_before == 0 ? 0.5 : 0.04)(rng);
  const std::string rank = std::to_string(std::uniform_int_distribution<int>(0, 1)(rng));
  const std::string ckpt = scratch_.file("ckpt"), out = scratch_.file("restart.out"),
                    err = scratch_.file("restart.err");
  const pid_t launcher =
      testing::spawn_shell(command("--epochs 30 --nproc-per-node 2 --max-restarts 1 --checkpoint " + ckpt) +
                           " >" + out + " 2>" + err);
  pid_t victim = -1;
  auto started_rank = [&] {
    for (pid_t child : testing::children_of(launcher)) {
      if (testing::environment_of(child, "RANK") == rank) victim = child;
    }
    return victim > 0;
  };
  ASSERT_TRUE(testing::wait_until(started_rank, std::chrono::seconds(60))) << testing::read_text(err);
  auto newest_epoch = [&] {
    int64_t newest = 0;
    std::error_code ec;
    if (!std::filesystem::is_directory(ckpt, ec)) return newest;
    static const std::regex name(R"(checkpoint-(\d{6})\.pt)");
    for (const auto& e : std::filesystem::directory_iterator(ckpt, ec)) {
      std::smatch m;
      const std::string file = e.path().filename().string();
      if (std::regex_match(file, m, name)) newest = std::max<int64_t>(newest, std::stoll(m[1]));
    }
    return newest;
  };
  ASSERT_TRUE(testing::wait_until([&] { return newest_epoch() >= epochs_before; }, std::chrono::seconds(60)))
      << testing::read_text(err);
  std::this_thread::sleep_for(std::chrono::duration<double>(extra_s));
  const int64_t checkpointed = newest_epoch();
  ASSERT_EQ(kill(victim, SIGKILL), 0)
      << "rank " << rank << " ended before the kill: " << testing::read_text(err);
  const int exit_code = testing::wait_exit_code(launcher);
  const std::string log = testing::read_text(err);
  ASSERT_EQ(exit_code, 0) << log;
  EXPECT_NE(log.find("rank " + rank + " (pid " + std::to_string(victim) + ") was killed by signal 9"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("restarting every local rank (1 of 1 restarts)"), std::string::npos) << log;
  const json restarted = json_lines(testing::read_text(out)).back();
  EXPECT_EQ(restarted["param_digest"], summary_of(full)["param_digest"]) << log;
  EXPECT_EQ(restarted["test_acc"], summary_of(full)["test_acc"]);
  if (checkpointed > 0) {
    EXPECT_GT(restarted["first_epoch"].get<int64_t>(), checkpointed)
        << "the restart resumes after the checkpoint";
    EXPECT_NE(log.find("restart 1: resuming from the newest checkpoint"), std::string::npos) << log;
  }
  std::cerr << "restart: drew epoch " << epochs_before << "; killed rank " << rank
            << " after the checkpoint of epoch " << checkpointed << " (+" << extra_s
            << " s); resumed at epoch " << restarted["first_epoch"] << ", param_digest "
            << restarted["param_digest"] << " (uninterrupted " << summary_of(full)["param_digest"] << ")\n";
}

TEST_F(DgcnTrain, AKillDuringACheckpointWriteLeavesThePreviousCheckpointGood) {
  const std::string ckpt = scratch_.file("ckpt"), err = scratch_.file("killed.err");
  auto first = train("--epochs 2 --checkpoint " + ckpt);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string previous = testing::read_text(ckpt + "/checkpoint-000002.pt");
  // The resume's first whole-file write is epoch 3's checkpoint: it stops
  // with every byte in its temporary, before the rename
  // (DGCN_TEST_PAUSE_AT, base/atomic_file.h), and is killed there.
  const pid_t run =
      testing::spawn_shell("env DGCN_TEST_PAUSE_AT=atomic-file-commit " +
                           command("--epochs 3 --checkpoint " + ckpt + " --resume") + " 2>" + err);
  auto paused = [&] { return testing::read_text(err).find("dgcn-test-paused-at") != std::string::npos; };
  if (!testing::wait_until(paused, std::chrono::seconds(60))) {
    kill(run, SIGKILL);
    testing::wait_exit_code(run);
    FAIL() << "never paused in a write: " << testing::read_text(err);
  }
  bool writing = false;
  for (const std::string& name : testing::ScratchDir::entries_of(ckpt)) {
    writing = writing || name.rfind("checkpoint-000003.pt.tmp-", 0) == 0;
  }
  EXPECT_TRUE(writing) << "paused in another write: " << testing::read_text(err);
  ASSERT_EQ(kill(run, SIGKILL), 0);
  EXPECT_EQ(testing::wait_exit_code(run), 128 + SIGKILL);
  const auto after_kill = finished_checkpoints(ckpt);
  EXPECT_EQ(std::count(after_kill.begin(), after_kill.end(), "checkpoint-000003.pt"), 0);
  EXPECT_TRUE(testing::read_text(ckpt + "/checkpoint-000002.pt") == previous)
      << "the previous checkpoint changed";
  // The resume starts again from epoch 2's checkpoint and ends where an
  // uninterrupted run does.
  auto rest = train("--epochs 3 --checkpoint " + ckpt + " --resume");
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  auto full = train("--epochs 3");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(summary_of(rest)["first_epoch"], 3);
  EXPECT_EQ(summary_of(rest)["param_digest"], summary_of(full)["param_digest"]);
}

// Note [In-epoch checkpoints]: a run resumed from a checkpoint written
// inside an epoch continues with the next batch: the same model, and the
// same report for that epoch, as the uninterrupted run.
TEST_F(DgcnTrain, AnInEpochCheckpointResumesWithTheNextBatch) {
  // 200 training nodes, 2 ranks, batches of 32: 4 batches per rank and epoch,
  // so a checkpoint after batch 3 of each epoch.
  const std::string a = scratch_.file("ckpt-a"), b = scratch_.file("ckpt-b"), c = scratch_.file("ckpt-c");
  const std::string flags = "--epochs 2 --nproc-per-node 2 --checkpoint-every-batches 3 --checkpoint ";
  auto full = train(flags + a + " --metrics-out " + scratch_.file("full.jsonl"));
  ASSERT_EQ(full.exit_code, 0) << full.err;
  std::vector<std::string> kept;
  for (const auto& e : std::filesystem::directory_iterator(a)) kept.push_back(e.path().filename().string());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept,
            (std::vector<std::string>{"best.pt", "checkpoint-000002-b000003.pt", "checkpoint-000002.pt"}));

  // What a kill after batch 3 of epoch 2 leaves: no checkpoint of the epoch's end.
  for (const std::string& dir : {b, c}) {
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(a + "/checkpoint-000002-b000003.pt", dir + "/checkpoint-000002-b000003.pt");
  }
  std::filesystem::copy_file(scratch_.file("full.jsonl"), scratch_.file("rest.jsonl"));
  auto rest = train(flags + b + " --resume --metrics-out " + scratch_.file("rest.jsonl"));
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_NE(rest.err.find("resume: continuing after batch 3 of epoch 2"), std::string::npos) << rest.err;
  EXPECT_EQ(summary_of(rest)["first_epoch"], 2);
  EXPECT_EQ(summary_of(rest)["param_digest"], summary_of(full)["param_digest"]);
  const auto full_lines = json_lines(testing::read_text(scratch_.file("full.jsonl")));
  const auto rest_lines = json_lines(testing::read_text(scratch_.file("rest.jsonl")));
  const auto epoch_2_lines = std::count_if(rest_lines.begin(), rest_lines.end(),
                                           [](const json& j) { return j.value("epoch", 0) == 2; });
  EXPECT_EQ(epoch_2_lines, 1) << "the resumed epoch's line once (the kept file had none for it)";
  ASSERT_EQ(rest_lines.back()["epoch"], 2);
  EXPECT_EQ(rest_lines.back()["loss"], full_lines.back()["loss"]) << "the epoch's sums came back exactly";
  EXPECT_EQ(rest_lines.back()["train_acc"], full_lines.back()["train_acc"]);

  auto other_ranks = train("--epochs 2 --checkpoint " + c + " --resume");
  EXPECT_EQ(other_ranks.exit_code, 1);
  EXPECT_NE(
      other_ranks.err.find("was written by a run on 2 rank(s); it resumes only on as many (this run has 1)"),
      std::string::npos)
      << other_ranks.err;
}

TEST_F(DgcnTrain, TwoLaunchersAsTwoNodesMatchOneLauncherWithTwoRanks) {
  auto single = train("--epochs 2 --nproc-per-node 2");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const std::string common = command(
      "--epochs 2 --nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 "
      "--master-port " +
      std::to_string(find_free_port()));
  const std::string n0 = scratch_.file("node0"), n1 = scratch_.file("node1");
  run_command("(" + common + " --node-rank 0 >" + n0 + ".out 2>" + n0 + ".err; echo $? >" + n0 + ".rc) & (" +
                  common + " --node-rank 1 >" + n1 + ".out 2>" + n1 + ".err; echo $? >" + n1 + ".rc) & wait",
              scratch_);
  ASSERT_EQ(testing::read_text(n0 + ".rc"), "0\n") << testing::read_text(n0 + ".err");
  ASSERT_EQ(testing::read_text(n1 + ".rc"), "0\n") << testing::read_text(n1 + ".err");
  EXPECT_TRUE(testing::read_text(n1 + ".out").empty()) << "only rank 0 prints";
  json s = json_lines(testing::read_text(n0 + ".out")).back();
  EXPECT_EQ(s["world_size"], 2);
  EXPECT_EQ(s["param_digest"], summary_of(single)["param_digest"]);
  EXPECT_EQ(logged_digests(testing::read_text(n1 + ".err"))[1], s["param_digest"]);
}

// Two machines reading different copies of the store (one label differs)
// must not train: every rank stops before the first step naming the digest.
TEST_F(DgcnTrain, NodesReadingDifferentCopiesOfTheStoreStopNamingTheDigest) {
  GraphStore other = testing::community_store();
  auto labels = testing::damage<int32_t>(other.labels);
  labels[0] = (labels[0] + 1) % static_cast<int32_t>(other.num_classes);
  const std::string other_path = scratch_.file("other.gcn");
  save_store(other, other_path);
  const std::string common =
      command("--epochs 1 --nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port " +
              std::to_string(find_free_port()));
  const std::string n0 = scratch_.file("node0"), n1 = scratch_.file("node1");
  const auto start = std::chrono::steady_clock::now();
  run_command("(" + common + " --node-rank 0 >" + n0 + ".out 2>" + n0 + ".err; echo $? >" + n0 + ".rc) & (" +
                  common + " --data " + other_path + " --node-rank 1 >" + n1 + ".out 2>" + n1 +
                  ".err; echo $? >" + n1 + ".rc) & wait",
              scratch_);
  const double seconds = seconds_since(start);
  for (const std::string& node : {n0, n1}) {
    const std::string err = testing::read_text(node + ".err");
    EXPECT_NE(testing::read_text(node + ".rc"), "0\n") << err;
    EXPECT_NE(err.find("replicas differ"), std::string::npos) << err;
    EXPECT_NE(err.find("rank 1 has data.digest = \""), std::string::npos) << err;
    EXPECT_EQ(err.find("data.path"), std::string::npos) << "a path may differ between machines: " << err;
  }
  EXPECT_LT(seconds, 25) << "the check fails at once, not by the 30 s collective timeout";
}

TEST_F(DgcnTrain, RunsUnderTorchrun) {
  auto ours = train("--epochs 1 --nproc-per-node 2");
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  auto r = run_command(testing::torchrun() + " --nproc_per_node 2 --master_port " +
                           std::to_string(find_free_port()) + " --no_python " + command("--epochs 1"),
                       scratch_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = summary_of(r);
  EXPECT_EQ(s["world_size"], 2);
  EXPECT_EQ(s["param_digest"], summary_of(ours)["param_digest"]);
}

TEST_F(DgcnTrain, TorchLoadInPythonReadsTheCheckpoint) {
  const std::string ckpt = scratch_.file("ckpt");
  auto r = train("--epochs 2 --nproc-per-node 2 --checkpoint " + ckpt);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string script = scratch_.file("read.py");
  std::ofstream(script)
      << "import json, sys, torch\n"
         "d = torch.load(sys.argv[1])\n"
         "state = {k[len('model.'):]: v for k, v in d.items() if k.startswith('model.')}\n"
         "print(json.dumps({'epoch': int(d['epoch']), 'seed': int(d['seed']),\n"
         "  'world_size': int(d['world_size']), 'best_epoch': float(d['extra.best_epoch']),\n"
         "  'config': json.loads(d['config']),\n"
         "  'shapes': {k: list(v.shape) for k, v in state.items()}}))\n";
  auto py = run_command(testing::python() + " " + script + " " + ckpt + "/checkpoint-000002.pt", scratch_);
  ASSERT_EQ(py.exit_code, 0) << py.err;
  json d = json::parse(py.out);
  EXPECT_EQ(d["epoch"], 2);
  EXPECT_EQ(d["seed"], 1);
  EXPECT_EQ(d["world_size"], 2);
  EXPECT_EQ(d["best_epoch"].get<double>(), summary_of(r)["best_epoch"].get<double>());
  EXPECT_EQ(d["config"], summary_of(r)["config"]) << "torch.load sees the run's record as a JSON string";
  EXPECT_EQ(d["config"]["model"]["fanouts"], json::array({5, 5}));
  // Two GCN layers 8 -> 16 -> 4 classes, as the model names them.
  EXPECT_EQ(d["shapes"]["conv1.weight"], json::array({8, 16}));
  EXPECT_EQ(d["shapes"]["conv2.weight"], json::array({16, 4}));
  EXPECT_EQ(d["shapes"]["conv2.bias"], json::array({4}));
}

TEST_F(DgcnTrain, BadDistributedOptionsAreClearErrors) {
  auto resume = train("--resume");
  EXPECT_EQ(resume.exit_code, 2) << "a usage error";
  EXPECT_NE(resume.err.find("--resume needs --checkpoint"), std::string::npos) << resume.err;
  auto nccl = train("--backend nccl --nproc-per-node 2");
  EXPECT_EQ(nccl.exit_code, 2) << "a usage error";
  EXPECT_NE(nccl.err.find("--backend nccl"), std::string::npos) << nccl.err;
}

}  // namespace
}  // namespace dgcn
