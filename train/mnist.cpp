#include "train/mnist.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "base/digest.h"
#include "base/timing.h"
#include "base/version.h"
#include "distributed/ddp.h"
#include "distributed/shard.h"
#include "train/epoch_driver.h"
#include "train/evaluation_split.h"
#include "train/optimizer.h"
#include "train/run_config.h"

namespace dgcn {
namespace {

struct Examples {
  at::Tensor x;  // float [n, 1, rows, cols], normalized
  at::Tensor y;  // int64 [n]
};

Examples to_tensors(const MnistSplit& split, int64_t limit, const c10::Device& device) {
  int64_t n = limit > 0 ? std::min(limit, split.count) : split.count;
  auto* pixels = const_cast<uint8_t*>(split.pixels.data());
  auto* labels = const_cast<uint8_t*>(split.labels.data());
  at::Tensor x = torch::from_blob(pixels, {n, 1, split.rows, split.cols}, torch::kUInt8).to(torch::kFloat);
  x.div_(255.0).sub_(0.5).div_(0.5);  // ToTensor() then Normalize(0.5, 0.5)
  at::Tensor y = torch::from_blob(labels, {n}, torch::kUInt8).to(torch::kLong);
  return {x.to(device), y.to(device)};
}

struct Evaluation {
  double acc = 0, loss = 0;
};

// Each rank scores a contiguous slice of the test set; the counts are summed.
Evaluation evaluate(torch::nn::Sequential& model, const Examples& test, ProcessGroup& group) {
  torch::NoGradGuard no_grad;
  const IndexRange slice = evaluation_slice(test.x.size(0), group.rank(), group.size());
  const int64_t begin = slice.begin, end = slice.end;
  at::Tensor correct = torch::zeros({}, torch::kLong), loss = torch::zeros({}, torch::kDouble);
  constexpr int64_t kChunk = 1000;
  for (int64_t b = begin; b < end; b += kChunk) {
    int64_t len = std::min(kChunk, end - b);
    at::Tensor logits = model->forward(test.x.narrow(0, b, len));
    at::Tensor y = test.y.narrow(0, b, len);
    loss += torch::nn::functional::cross_entropy(
                logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                .to(torch::kCPU, torch::kDouble);
    correct += logits.argmax(1).eq(y).sum().cpu();
  }
  auto sums = group.sum(
      {static_cast<double>(correct.item<int64_t>()), loss.item<double>(), static_cast<double>(end - begin)});
  return {sums[0] / sums[2], sums[1] / sums[2]};
}

// The run's record (train/run_config.h).
nlohmann::json mnist_run_config(const MnistData& data, const MnistOptions& o, int world_size) {
  Digest digest;
  const int64_t train = o.train_limit > 0 ? std::min(o.train_limit, data.train.count) : data.train.count;
  const int64_t pixels = data.train.rows * data.train.cols;
  digest.update(data.train.pixels.data(), static_cast<size_t>(train * pixels));
  digest.update(data.train.labels.data(), static_cast<size_t>(train));
  digest.update(data.test.pixels.data(), data.test.pixels.size());
  digest.update(data.test.labels.data(), data.test.labels.size());
  OptimizerOptions sgd;
  sgd.kind = OptimizerKind::kSgd;
  sgd.lr = o.lr;
  return {{"version", dgcn_version()},
          {"seed", o.seed},
          {"model", {{"kind", "flatten-linear"}, {"in_features", pixels}, {"num_classes", kMnistClasses}}},
          {"optimizer", optimizer_record(sgd)},
          {"run", {{"batch_size", o.batch_size}, {"world_size", world_size}}},
          {"data",
           {{"path", o.data_path},
            {"digest", digest.hex()},
            {"train_examples", train},
            {"test_examples", data.test.count}}}};
}

// The baseline as an EpochTask. Its shuffle is keyed by the 1-based epoch
// number (as its output counts epochs), the driver's epochs are 0-based.
class MnistEpochTask final : public EpochTask {
 public:
  MnistEpochTask(const MnistData& data, const MnistOptions& options, ProcessGroup& group,
                 std::vector<ReplicaField> replica_settings)
      : options_(options), group_(group), device_(group.device()) {
    train_ = to_tensors(data.train, options.train_limit, device_);
    test_ = to_tensors(data.test, 0, device_);
    torch::manual_seed(static_cast<uint64_t>(options.seed));
    model_ = make_mnist_linear(data.train.rows * data.train.cols);
    model_->to(device_);
    OptimizerOptions sgd;
    sgd.kind = OptimizerKind::kSgd;
    sgd.lr = options.lr;
    optimizer_ = make_optimizer(sgd, model_->parameters());
    DdpOptions ddp;
    ddp.replica_settings = std::move(replica_settings);
    ddp_ = std::make_unique<DistributedDataParallel>(*model_, group, ddp);
  }

  torch::nn::Module& module() override { return *model_; }
  torch::optim::Optimizer& optimizer() override { return *optimizer_; }

  void train_epoch(int64_t epoch, const EpochStart*, const AfterBatch&) override {
    const auto start = std::chrono::steady_clock::now();
    const int64_t n = train_.x.size(0);
    std::vector<int64_t> shard =
        shuffled_shard(n, group_.size(), group_.rank(), static_cast<uint64_t>(options_.seed), epoch + 1);
    at::Tensor order =
        torch::from_blob(shard.data(), {static_cast<int64_t>(shard.size())}, torch::kLong).to(device_);
    at::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device_));
    int64_t batches = 0;
    for (int64_t b = 0; b < order.size(0); b += options_.batch_size) {
      at::Tensor idx = order.narrow(0, b, std::min(options_.batch_size, order.size(0) - b));
      at::Tensor loss = torch::nn::functional::cross_entropy(model_->forward(train_.x.index_select(0, idx)),
                                                             train_.y.index_select(0, idx));
      optimizer_->zero_grad();
      ddp_->backward(loss);
      optimizer_->step();
      loss_sum += loss.detach().to(torch::kDouble);
      ++batches;
    }
    const double seconds = seconds_since(start);
    train_seconds_ += seconds;
    auto loss_totals = group_.sum({loss_sum.item<double>(), static_cast<double>(batches)});

    group_.barrier();  // every rank has finished the epoch before evaluation
    const Evaluation eval = evaluate(model_, test_, group_);
    last_ = MnistEpoch{epoch + 1, loss_totals[0] / loss_totals[1], eval.acc, eval.loss, seconds};
    test_acc_ = eval.acc;
  }
  void evaluate_now() override { test_acc_ = evaluate(model_, test_, group_).acc; }
  void restore_progress(int64_t, const std::map<std::string, double>&) override {
    set_learning_rate(*optimizer_, options_.lr);  // Note [What a resume may change]
  }

  const MnistEpoch& last_epoch() const { return last_; }
  double test_acc() const { return test_acc_; }
  double train_seconds() const { return train_seconds_; }

 private:
  const MnistOptions& options_;
  ProcessGroup& group_;
  const c10::Device device_;
  Examples train_, test_;
  torch::nn::Sequential model_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<DistributedDataParallel> ddp_;
  MnistEpoch last_;
  double test_acc_ = 0, train_seconds_ = 0;
};

}  // namespace

torch::nn::Sequential make_mnist_linear(int64_t pixels) {
  return torch::nn::Sequential(torch::nn::Flatten(), torch::nn::Linear(pixels, kMnistClasses));
}

MnistSummary train_mnist(const MnistData& data, const MnistOptions& options, ProcessGroup& group,
                         const std::function<void(const MnistEpoch&)>& on_epoch) {
  TORCH_CHECK(options.batch_size >= 1, "train_mnist: batch size ", options.batch_size, " must be positive");
  EpochRunOptions run;
  run.config = mnist_run_config(data, options, group.size());
  MnistEpochTask task(data, options, group, replica_settings(run.config));
  run.epochs = options.epochs;
  run.seed = static_cast<uint64_t>(options.seed);
  run.checkpoint_dir = options.checkpoint_dir;
  run.resume = options.resume;
  const EpochRunResult result = run_epochs(task, run, group, [&](int64_t) { on_epoch(task.last_epoch()); });

  MnistSummary summary;
  summary.first_epoch = result.epochs_before + 1;
  summary.epochs = result.epochs_done;
  summary.test_acc = task.test_acc();
  summary.param_digest = result.param_digest;
  summary.train_seconds = task.train_seconds();
  summary.config = run.config;
  return summary;
}

}  // namespace dgcn
