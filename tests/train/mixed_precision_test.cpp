// --precision bf16 (Note [Mixed precision] in models/gcn.h) keeps the
// promises fp32 runs make: the same model whatever the thread count, a
// resumed run equal to the uninterrupted one, the precision in the run's
// record (a checkpoint resumes only in its own), prediction from a bf16
// checkpoint.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/file_io.h"
#include "datasets/npy.h"
#include "distributed/process_group.h"
#include "fixtures.h"
#include "scratch_dir.h"
#include "tiny_job.h"
#include "train/compute_features.h"
#include "train/gcn_trainer.h"
#include "train/open_data.h"
#include "train/predict.h"
#include "train/train_job.h"

namespace dgcn {
namespace {

using testing::community_store;

TrainOptions bf16_options() {
  TrainOptions o;
  o.fanouts = {5, 5};
  o.batch_size = 64;
  o.hidden = 16;
  o.optimizer.lr = 0.02;
  o.dropout = 0.2;
  o.seed = 1;
  o.compute_threads = 2;
  o.loader_workers = 2;
  o.precision = Precision::kBf16;
  return o;
}

TEST(MixedPrecisionTrainer, Bf16LearnsAndIsTheSameModelWhateverTheThreads) {
  const GraphStore s = community_store();
  std::vector<std::string> digests;
  for (int threads : {1, 2}) {
    TrainOptions o = bf16_options();
    o.epochs = 2;
    o.compute_threads = threads;
    o.loader_workers = threads;
    at::set_num_threads(threads);
    Trainer t(s, o);
    t.train_epoch(0);
    t.train_epoch(1);
    digests.push_back(t.summary().param_digest);
  }
  at::set_num_threads(2);
  EXPECT_EQ(digests[0], digests[1]);

  TrainOptions o = bf16_options();
  o.epochs = 15;
  Trainer t(s, o);
  for (int64_t e = 0; e < 15; ++e) t.train_epoch(e);
  EXPECT_GT(t.summary().test_metric, 0.8) << "4 classes: chance is 0.25";
  o.precision = Precision::kFp32;
  o.epochs = 2;
  Trainer fp32(s, o);
  fp32.train_epoch(0);
  fp32.train_epoch(1);
  EXPECT_NE(fp32.summary().param_digest, digests[0]) << "bf16 trained in fp32";
}

// Both layer orders of the first layer and the sampled evaluation run in bf16.
TEST(MixedPrecisionTrainer, Bf16RunsEveryPath) {
  const GraphStore s = community_store();
  for (int64_t hidden : {16, 1}) {
    for (bool from_store : {false, true}) {
      TrainOptions o = bf16_options();
      o.epochs = 1;
      o.hidden = hidden;
      o.input_from_store = from_store;
      o.input_dropout = from_store ? 0.0 : 0.2;
      o.linear_head = hidden == 1;
      o.eval_mode = from_store ? EvalMode::kFullNeighbour : EvalMode::kSampled;
      Trainer t(s, o);
      const EpochReport r = t.train_epoch(0);
      EXPECT_TRUE(std::isfinite(r.loss));
      ASSERT_TRUE(r.valid_metric.has_value());
      EXPECT_GE(*r.valid_metric, 0.0);
    }
  }
}

TrainJobOptions bf16_job(const testing::ScratchDir& dir) {
  TrainJobOptions job = testing::tiny_job();
  job.train.precision = Precision::kBf16;
  job.train.epochs = 3;
  job.checkpoint_dir = dir.file("ckpt");
  return job;
}

TEST(MixedPrecisionJob, Bf16ResumesToTheUninterruptedModelAndNotAsFp32) {
  testing::ScratchDir full_dir, dir;
  auto group = ProcessGroup::create(RankEnv{}, {});
  const TrainJobResult full = run_train_job(bf16_job(full_dir), *group);
  EXPECT_EQ(full.summary["config"]["model"]["precision"], "bf16");
  EXPECT_EQ(full.summary["precision"]["name"], "bf16");
  EXPECT_TRUE(full.summary["precision"].contains("cpu_bf16_instructions"));

  // Stopped after epoch 1, and once more inside epoch 3 (Note [In-epoch checkpoints]).
  TrainJobOptions job = bf16_job(dir);
  job.train.epochs = 1;
  run_train_job(job, *group);
  job.train.epochs = 3;
  job.resume = true;
  job.checkpoint_every_batches = 1;
  EXPECT_EQ(run_train_job(job, *group).train.param_digest, full.train.param_digest);
  std::filesystem::remove(dir.file("ckpt/checkpoint-000003.pt"));
  const TrainJobResult inside = run_train_job(job, *group);
  EXPECT_EQ(inside.summary["first_epoch"], 3);
  EXPECT_EQ(inside.train.param_digest, full.train.param_digest);

  job.train.precision = Precision::kFp32;
  job.train.epochs = 4;
  try {
    run_train_job(job, *group);
    ADD_FAILURE() << "a bf16 checkpoint resumed as fp32";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("model.precision was \"bf16\", this run has \"fp32\""),
              std::string::npos)
        << e.what();
  }
  group->shutdown();
}

TEST(MixedPrecisionJob, PredictRunsInTheCheckpointsPrecisionUnlessTold) {
  testing::ScratchDir dir;
  auto group = ProcessGroup::create(RankEnv{}, {});
  TrainJobOptions job = bf16_job(dir);
  job.train.epochs = 2;
  run_train_job(job, *group);
  const GraphStore store = open_data(job.data, *group, {}).store;
  PredictOptions o;
  o.checkpoint = job.checkpoint_dir;
  o.what = {"logits", "embeddings"};
  o.out = dir.file("bf16");
  const nlohmann::json bf16 = predict(store, o, *group, 1);
  o.precision = Precision::kFp32;
  o.out = dir.file("fp32");
  const nlohmann::json fp32 = predict(store, o, *group, 1);
  group->shutdown();
  EXPECT_EQ(bf16["precision"], "bf16");
  EXPECT_EQ(fp32["precision"], "fp32");
  EXPECT_NEAR(bf16["acc"].get<double>(), fp32["acc"].get<double>(), 0.05);
  for (const char* what : {"logits", "embeddings"}) {
    const NpyArray a = read_npy_file(dir.file(std::string("bf16.") + what + ".npy"));
    const NpyArray b = read_npy_file(dir.file(std::string("fp32.") + what + ".npy"));
    ASSERT_EQ(a.header.dtype, DType::kFloat32) << what;
    const auto x = a.data.as<float>(), y = b.data.as<float>();
    ASSERT_EQ(x.size(), y.size());
    double worst = 0;
    bool same = true;
    for (size_t i = 0; i < x.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(x[i]) - y[i]) / (1.0 + std::abs(y[i])));
      same = same && x[i] == y[i];
    }
    EXPECT_LT(worst, 0.05) << what;
    EXPECT_FALSE(same) << what << ": the bf16 prediction ran in fp32";
  }
}

// The kB of `p`'s mapping resident in this process (/proc/self/smaps).
int64_t resident_kb_of_mapping(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto at = reinterpret_cast<uintptr_t>(p);
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && line.find(' ') < 40) {
      inside = at >= lo && at < hi;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stoll(line.substr(4));
    }
  }
  return -1;
}

// Note [Feature pages after conversion]: the bf16 copy has Tensor::to's bits
// (NaN, infinities, denormals and ties included) and, converted from a
// read-only file mapping in chunks that split pages, leaves none of the
// mapping's pages resident while the file's bytes read back unchanged; an
// owned buffer is converted as well and never released.
TEST(MixedPrecisionFeatures, Bf16CopyEqualsToAndReleasesOnlyAFileMapping) {
  const int64_t rows = 3001, cols = 7;
  std::vector<float> values(static_cast<size_t>(rows * cols));
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 10.0f);
  for (auto& v : values) v = normal(rng);
  const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::denorm_min(),
                           -0.0f,
                           std::bit_cast<float>(0x3F808000u),
                           std::bit_cast<float>(0x3F818000u)};
  std::copy(std::begin(special), std::end(special), values.begin() + 100);
  const at::Tensor expected =
      torch::from_blob(values.data(), {rows, cols}, torch::kFloat).to(torch::kBFloat16).view(torch::kInt16);

  testing::ScratchDir dir;
  const std::string path = dir.file("features.bin");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
  }
  const UniqueFd fd = open_read(path);
  auto file = std::make_shared<MappedFile>(fd.get(), values.size() * 4, path);
  const Buffer mapped = Buffer::wrap(file, file->data(), file->size());
  volatile float sink = 0;
  for (float v : mapped.as<float>()) sink = sink + v;  // every page resident, as after a store's digest
  ASSERT_GT(resident_kb_of_mapping(file->data()), 60);

  bool released = false;
  const int64_t chunk_bytes = 3 * 4096 + 100;  // chunks that end inside pages
  const at::Tensor x = compute_features(mapped, rows, cols, torch::kBFloat16, true, &released, chunk_bytes);
  EXPECT_TRUE(released);
  EXPECT_EQ(x.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(x.view(torch::kInt16), expected));
  EXPECT_LE(resident_kb_of_mapping(file->data()), 4) << "the float32 pages stayed resident";
  EXPECT_EQ(std::memcmp(mapped.data(), values.data(), mapped.size()), 0);

  const Buffer owned = Buffer::copy_of(std::span<const float>(values));
  const at::Tensor y = compute_features(owned, rows, cols, torch::kBFloat16, true, &released, chunk_bytes);
  EXPECT_FALSE(released);
  EXPECT_TRUE(torch::equal(y.view(torch::kInt16), expected));
  EXPECT_EQ(std::memcmp(owned.data(), values.data(), owned.size()), 0);

  // float32: the buffer's own bytes, no copy.
  const at::Tensor z = compute_features(owned, rows, cols, torch::kFloat, true, &released);
  EXPECT_FALSE(released);
  EXPECT_EQ(z.data_ptr(), static_cast<const void*>(owned.data()));
  EXPECT_THROW(compute_features(owned, rows + 1, cols, torch::kBFloat16, false), Error);
}

}  // namespace
}  // namespace dgcn
