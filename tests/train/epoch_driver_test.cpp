// The epoch driver's rules that need no run (the parameter digest), and
// its collectives on ranks that are threads of one process: the replica
// check, and a resume that restores rank 0's checkpoint on every rank.
#include "train/epoch_driver.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "in_process_collectives.h"
#include "models/gcn.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

TEST(ParamDigest, EqualExactlyForBitIdenticalParameters) {
  GcnOptions g;
  g.in_features = 10, g.hidden = 8, g.num_classes = 3, g.num_layers = 2;
  torch::manual_seed(5);
  Gcn a(g);
  torch::manual_seed(5);
  Gcn b(g);
  EXPECT_EQ(param_digest(*a), param_digest(*b));
  EXPECT_EQ(param_digest(*a).size(), 16u);
  {
    torch::NoGradGuard no_grad;
    b->named_parameters()["conv2.bias"][1] += 1e-6f;
  }
  EXPECT_NE(param_digest(*a), param_digest(*b));
}

// A task whose training changes nothing: its weights are the value it was
// made with, or a checkpoint's.
class ConstantTask final : public EpochTask {
 public:
  explicit ConstantTask(float value) {
    torch::NoGradGuard no_grad;
    for (auto& p : net_->parameters()) p.fill_(value);
  }
  torch::nn::Module& module() override { return *net_; }
  torch::optim::Optimizer& optimizer() override { return optimizer_; }
  void train_epoch(int64_t, const EpochStart*, const AfterBatch&) override { ++epochs_trained; }
  void evaluate_now() override {}
  int epochs_trained = 0;

 private:
  torch::nn::Linear net_{2, 1};
  torch::optim::SGD optimizer_{net_->parameters(), torch::optim::SGDOptions(0.1)};
};

TEST(RunEpochs, ReplicasThatDifferStopEveryRank) {
  testing::InProcessGroup two(2);
  testing::run_ranks(2, [&](int rank) {
    ConstantTask task(rank == 0 ? 1.0f : 2.0f);
    try {
      run_epochs(task, {.epochs = 1}, two.at(rank));
      ADD_FAILURE() << "rank " << rank << " accepted replicas that differ";
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find("1 rank(s) disagree with rank 0's param_digest"),
                std::string::npos)
          << e.what();
    }
  });
}

TEST(RunEpochs, AResumeRestoresRankZerosCheckpointOnEveryRank) {
  testing::ScratchDir dir;
  testing::InProcessGroup two(2);
  const std::string expected = param_digest(ConstantTask(1.0f).module());
  testing::run_ranks(2, [&](int rank) {
    ConstantTask task(1.0f);
    run_epochs(task, {.epochs = 1, .checkpoint_dir = dir.path()}, two.at(rank));
  });
  testing::run_ranks(2, [&](int rank) {
    ConstantTask task(rank == 0 ? 3.0f : 4.0f);  // until the checkpoint replaces the weights
    const EpochRunResult r =
        run_epochs(task, {.epochs = 2, .checkpoint_dir = dir.path(), .resume = true}, two.at(rank));
    EXPECT_EQ(r.epochs_before, 1) << "rank " << rank;
    EXPECT_EQ(task.epochs_trained, 1) << "rank " << rank;
    EXPECT_EQ(r.param_digest, expected) << "rank " << rank;
  });
}

}  // namespace
}  // namespace dgcn
