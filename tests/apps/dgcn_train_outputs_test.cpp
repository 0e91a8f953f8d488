// dgcn-train's outputs are never lost or wrong, and a resume checks what it
// resumes: the metrics file appended line by line and kept across a resume,
// a full disk, output paths checked before training, the summary before the
// plot, a diverging loss, self-describing checkpoints, unlabelled nodes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "graph/store_format.h"
#include "json_output.h"
#include "run_command.h"
#include "train_runs.h"

namespace dgcn {
namespace {

using nlohmann::json;
using testing::json_lines;
using testing::read_text;
using testing::summary_of;
using DgcnTrainOutputs = testing::DgcnTrainRuns;

// No file of the folder but `allowed` (and nothing named *.tmp-*).
void expect_only(const testing::ScratchDir& dir, const std::vector<std::string>& allowed) {
  for (const auto& name : dir.entries()) {
    if (name.rfind("cmd", 0) == 0) continue;  // run_command's captured output
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), name), allowed.end()) << "left behind: " << name;
  }
}

TEST_F(DgcnTrainOutputs, MetricsAreAppendedAndAResumeKeepsTheLinesUpToItsCheckpoint) {
  const std::string metrics = scratch_.file("m.jsonl"), ckpt = scratch_.file("ckpt");
  ASSERT_EQ(train("--epochs 2 --checkpoint " + ckpt + " --metrics-out " + metrics).exit_code, 0);
  // Lines of a run that died after its checkpoint (epoch 3) and a cut line:
  // a resume from epoch 2's checkpoint drops them.
  std::ofstream(metrics, std::ios::app) << "{\"epoch\": 3, \"loss\": 9}\n{\"epoch\": 4, \"lo";
  std::filesystem::remove(ckpt + "/checkpoint-000003.pt");
  auto r = train("--epochs 4 --checkpoint " + ckpt + " --resume --metrics-out " + metrics);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = json_lines(read_text(metrics));
  ASSERT_EQ(lines.size(), 6u) << read_text(metrics);
  EXPECT_TRUE(lines[0].contains("config"));
  EXPECT_EQ(lines[1]["epoch"], 1);
  EXPECT_EQ(lines[2]["epoch"], 2);
  EXPECT_EQ(lines[3]["first_epoch"], 3) << "the resumed run's record";
  EXPECT_EQ(lines[4]["epoch"], 3);
  EXPECT_NE(lines[4]["loss"], 9);
  EXPECT_EQ(lines[5]["epoch"], 4);
  EXPECT_EQ(summary_of(r)["first_epoch"], 3);
}

TEST_F(DgcnTrainOutputs, AFullDiskStopsTheRunWithTheReason) {
  auto r = train("--epochs 3 --metrics-out /dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("metrics /dev/full: write failed: No space left on device"), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << "no summary of a failed run";
}

TEST_F(DgcnTrainOutputs, OutputPathsAreCheckedBeforeTraining) {
  struct Case {
    std::string flags, message;
  };
  std::filesystem::create_directories(scratch_.file("adir"));
  std::ofstream(scratch_.file("afile")) << "x";
  const std::vector<Case> cases = {
      {"--metrics-out " + scratch_.file("none/m.jsonl"), "--metrics-out " + scratch_.file("none/m.jsonl") +
                                                             ": the folder " + scratch_.file("none") +
                                                             " does not exist"},
      {"--metrics-out " + scratch_.file("adir"), "is a folder, expected a file name"},
      {"--plot " + scratch_.file("curves.pdf"),
       "--plot: plot " + scratch_.file("curves.pdf") + ": the file name must end in .png or .svg"},
      {"--checkpoint " + scratch_.file("afile"),
       "--checkpoint " + scratch_.file("afile") + ": exists and is not a folder"},
      {"--checkpoint " + data_,
       "--checkpoint " + data_ + ": is a .gcn graph store, not a folder (a store is read with --data"},
      {"--checkpoint " + scratch_.file("none/ckpt") + " --resume", "no such file or folder"},
  };
  for (const Case& c : cases) {
    auto r = train("--epochs 1 " + c.flags);
    // An output that cannot be written is a usage error; a folder to resume
    // from that is not there fails the run.
    EXPECT_EQ(r.exit_code, c.flags.find("--resume") == std::string::npos ? 2 : 1) << c.flags;
    EXPECT_NE(r.err.find("dgcn-train: error: "), std::string::npos) << "one shape: " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.flags << ": " << r.err;
    EXPECT_EQ(r.err.find("epoch   1"), std::string::npos) << "no training before the check: " << r.err;
  }
  expect_only(scratch_, {"community.gcn", "adir", "afile"});
}

TEST_F(DgcnTrainOutputs, TheSummaryComesBeforeAPlotThatFailsInGnuplotsWords) {
  // A gnuplot that fails the way the real one does, first on the PATH.
  const std::string bin = scratch_.file("bin");
  std::filesystem::create_directories(bin);
  std::ofstream(bin + "/gnuplot")
      << "#!/bin/sh\ncat >/dev/null\necho '\"-\" line 3: unknown or ambiguous terminal' >&2\nexit 1\n";
  std::filesystem::permissions(bin + "/gnuplot", std::filesystem::perms::owner_all);
  auto r = train("--epochs 1 --plot " + scratch_.file("c.png"), "PATH=" + bin + ":$PATH ");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(summary_of(r).contains("param_digest")) << "the result is out: " << r.out;
  EXPECT_NE(r.err.find("line 3: unknown or ambiguous terminal"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("is gnuplot-nox installed"), std::string::npos) << r.err;
  expect_only(scratch_, {"community.gcn", "bin"});
  // With the real gnuplot, an SVG.
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    auto ok = train("--epochs 2 --plot " + scratch_.file("c.svg"));
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_NE(read_text(scratch_.file("c.svg")).find("<svg"), std::string::npos);
  }
}

TEST_F(DgcnTrainOutputs, ADivergingLossStopsTheRunAndKeepsTheGoodCheckpoints) {
  // Two good epochs leave checkpoints; their resume with a learning rate of
  // 1e30 (a resume may change the lr) takes one Adam step of ~1e30 per weight
  // in epoch 3, and the next batch's loss overflows.
  const std::string ckpt = scratch_.file("ckpt");
  ASSERT_EQ(train("--epochs 2 --checkpoint " + ckpt).exit_code, 0);
  const std::vector<std::string> good = {"best.pt", "checkpoint-000001.pt", "checkpoint-000002.pt"};
  ASSERT_EQ(testing::ScratchDir::entries_of(ckpt), good);
  std::vector<std::string> bytes;
  for (const std::string& name : good) bytes.push_back(read_text(ckpt + "/" + name));
  auto r = train("--epochs 6 --lr 1e30 --checkpoint " + ckpt + " --resume");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("training: the loss became"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in epoch 3"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "no summary reporting a diverged run as a result";
  // The good checkpoints, unchanged, and nothing written after them.
  EXPECT_EQ(testing::ScratchDir::entries_of(ckpt), good) << r.err;
  for (size_t i = 0; i < good.size(); ++i) {
    EXPECT_TRUE(read_text(ckpt + "/" + good[i]) == bytes[i]) << good[i] << " changed";
  }
}

TEST_F(DgcnTrainOutputs, AResumeOfAnotherRunIsAnErrorNamingEveryFieldAndBothValues) {
  const std::string ckpt = scratch_.file("ckpt");
  ASSERT_EQ(train("--epochs 1 --checkpoint " + ckpt).exit_code, 0);
  const std::string other = scratch_.file("other.gcn");
  GraphStore s = testing::community_store();
  s.features = Buffer::from_vector(std::vector<float>(s.features.as<float>().size(), 0.5f));  // same shape
  save_store(s, other);
  struct Case {
    std::string flags, message;
  };
  const std::vector<Case> cases = {
      {"--hidden 32", "model.hidden was 16, this run has 32"},
      {"--optimizer sgd", "optimizer.name was \"adam\", this run has \"sgd\""},
      {"--num-neighbors 5,4", "model.fanouts was [5,5], this run has [5,4]"},
      {"--head linear", "model.head was \"none\", this run has \"linear\""},
      {"--norm block", "model.norm was \"full\", this run has \"block\""},
  };
  for (const Case& c : cases) {
    auto r = train("--epochs 2 --checkpoint " + ckpt + " --resume " + c.flags);
    EXPECT_EQ(r.exit_code, 1) << c.flags;
    EXPECT_NE(r.err.find("belongs to another run"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.flags << ": " << r.err;
  }
  // Another graph of the same shape: its digest differs.
  auto r = testing::run_command(
      testing::kTrain + " --data " + other +
          " --num-neighbors 5,5 --batch-size 32 --hidden 16 --lr 0.02 --threads 1 --seed 1 "
          "--epochs 2 --checkpoint " +
          ckpt + " --resume",
      scratch_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("data.digest was"), std::string::npos) << r.err;
  // What may change is logged, and the new learning rate applies.
  auto lr = train("--epochs 2 --checkpoint " + ckpt + " --resume --lr 0.01");
  ASSERT_EQ(lr.exit_code, 0) << lr.err;
  EXPECT_NE(lr.err.find("changed since the checkpoint: optimizer.lr was 0.02, this run has 0.01"),
            std::string::npos)
      << lr.err;
}

// A fresh run into a folder that holds another run's checkpoints would
// overwrite its best.pt and leave its later checkpoints for a --resume to
// pick: refused, naming the way on; --overwrite-checkpoints replaces them.
TEST_F(DgcnTrainOutputs, AFreshRunRefusesAFolderOfAnotherRunsCheckpoints) {
  const std::string ckpt = scratch_.file("ckpt");
  ASSERT_EQ(train("--epochs 3 --checkpoint " + ckpt).exit_code, 0);
  const auto before = testing::ScratchDir::entries_of(ckpt);
  auto r = train("--epochs 1 --seed 2 --checkpoint " + ckpt);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("dgcn-train: error: --checkpoint " + ckpt + " holds another run's checkpoints"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("add --resume to continue that run"), std::string::npos) << r.err;
  EXPECT_EQ(testing::ScratchDir::entries_of(ckpt), before) << "nothing of the old run is touched";
  auto o = train("--epochs 1 --seed 2 --checkpoint " + ckpt + " --overwrite-checkpoints");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(testing::ScratchDir::entries_of(ckpt),
            (std::vector<std::string>{"best.pt", "checkpoint-000001.pt"}));
}

// --epochs below what the checkpoint has done leaves nothing to train.
TEST_F(DgcnTrainOutputs, AResumeWithFewerEpochsThanDoneIsAnError) {
  const std::string ckpt = scratch_.file("ckpt");
  ASSERT_EQ(train("--epochs 3 --checkpoint " + ckpt).exit_code, 0);
  auto r = train("--epochs 2 --checkpoint " + ckpt + " --resume");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has finished epoch 3, past the 2 epochs this run asks for; nothing is left to train"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(train("--epochs 3 --checkpoint " + ckpt + " --resume").exit_code, 0) << "equal: evaluates it";
}

// Two sources of data are a usage error, not a silent choice.
TEST_F(DgcnTrainOutputs, APresetAndDataTogetherAreAUsageError) {
  auto r = train("--epochs 1 --preset tiny");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("dgcn-train: error: --data excludes --preset"), std::string::npos) << r.err;
}

TEST(DgcnTrainLabels, UnlabelledNodesCountNowhere) {
  // Half the test nodes lose their label: the test accuracy is the one over
  // the labelled half, never above 0.5 by construction of the denominator.
  testing::ScratchDir dir;
  GraphStore s = testing::community_store();
  GraphStore half = testing::community_store();
  std::vector<int32_t> labels(s.labels.as<int32_t>().begin(), s.labels.as<int32_t>().end());
  std::vector<int64_t> kept;
  const auto test = s.test_nodes();
  for (size_t i = 0; i < test.size(); ++i) {
    if (i % 2 == 0) {
      labels[static_cast<size_t>(test[i])] = -1;
    } else {
      kept.push_back(test[i]);
    }
  }
  s.labels = Buffer::from_vector(std::vector<int32_t>(labels));
  half.test = Buffer::from_vector(std::move(kept));
  save_store(s, dir.file("unlabelled.gcn"));
  save_store(half, dir.file("half.gcn"));
  const std::string flags =
      " --num-neighbors 5,5 --batch-size 32 --hidden 16 --lr 0.02 --threads 1 --seed 1 --epochs 3";
  auto a = testing::run_command(testing::kTrain + " --data " + dir.file("unlabelled.gcn") + flags, dir);
  auto b = testing::run_command(testing::kTrain + " --data " + dir.file("half.gcn") + flags, dir);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_GT(summary_of(a)["test_acc"].get<double>(), 0.6);
  EXPECT_EQ(summary_of(a)["test_acc"], summary_of(b)["test_acc"]);
  EXPECT_EQ(summary_of(a)["param_digest"], summary_of(b)["param_digest"]) << "training is untouched";
}

TEST(DgcnTrainLabels, UnlabelledSeedsAverageOverTheUnionOfRanks) {
  // Every neighbour (fanout -1) and no dropout: the batches do not depend on
  // the random keys, so 2 ranks of 100 seeds each step on the same union
  // batch as 1 process with 200. A third of the seeds carry no label; the
  // gradient must be the mean over the union's labelled seeds (not the mean
  // of the two ranks' means), so both runs follow the same loss curve.
  testing::ScratchDir dir;
  GraphStore s = testing::community_store();
  std::vector<int32_t> labels(s.labels.as<int32_t>().begin(), s.labels.as<int32_t>().end());
  const auto train_nodes = s.train_nodes();
  for (size_t i = 0; i < train_nodes.size(); ++i) {
    if (i % 3 == 0 || (i < 60 && i % 3 == 1)) labels[static_cast<size_t>(train_nodes[i])] = -1;
  }
  s.labels = Buffer::from_vector(std::move(labels));
  save_store(s, dir.file("g.gcn"));
  const std::string common =
      testing::kTrain + " --data " + dir.file("g.gcn") +
      " --num-neighbors -1,-1 --hidden 16 --lr 0.05 --dropout 0 --threads 1 --epochs 4 "
      "--eval none --load private --timeout 30 ";
  const std::string m1 = dir.file("one.jsonl"), m2 = dir.file("two.jsonl");
  auto one = testing::run_command(common + "--batch-size 200 --metrics-out " + m1, dir);
  auto two = testing::run_command(common + "--batch-size 100 --nproc-per-node 2 --metrics-out " + m2, dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const auto a = json_lines(read_text(m1)), b = json_lines(read_text(m2));
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), 5u);
  for (size_t e = 1; e < a.size(); ++e) {
    EXPECT_NEAR(a[e]["loss"].get<double>(), b[e]["loss"].get<double>(), 2e-5) << "epoch " << e;
    EXPECT_TRUE(std::isfinite(a[e]["loss"].get<double>()));
  }
}

}  // namespace
}  // namespace dgcn
