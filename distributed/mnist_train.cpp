#include "distributed/mnist_train.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "distributed/checkpoint.h"
#include "distributed/ddp.h"
#include "distributed/shard.h"
#include "graph/digest.h"

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

std::string digest_of(const torch::nn::Module& model) {
  Digest digest;
  for (const auto& p : model.parameters()) {
    at::Tensor c = p.detach().cpu().contiguous();
    digest.update(c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
  }
  return digest.hex();
}

struct Evaluation {
  double acc = 0, loss = 0;
};

// Each rank scores a contiguous slice of the test set; the counts are summed.
Evaluation evaluate(torch::nn::Sequential& model, const Examples& test, ProcessGroup& group) {
  torch::NoGradGuard no_grad;
  int64_t n = test.x.size(0);
  int64_t begin = n * group.rank() / group.size(), end = n * (group.rank() + 1) / group.size();
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
  auto sums = group.sum_over_ranks(
      {static_cast<double>(correct.item<int64_t>()), loss.item<double>(), static_cast<double>(end - begin)});
  return {sums[0] / sums[2], sums[1] / sums[2]};
}

}  // namespace

torch::nn::Sequential make_mnist_linear(int64_t pixels) {
  return torch::nn::Sequential(torch::nn::Flatten(), torch::nn::Linear(pixels, kMnistClasses));
}

MnistSummary train_mnist(const MnistData& data, const MnistOptions& options, ProcessGroup& group,
                         const std::function<void(const MnistEpoch&)>& on_epoch) {
  TORCH_CHECK(options.batch_size >= 1, "train_mnist: batch size ", options.batch_size, " must be positive");
  TORCH_CHECK(!options.resume || !options.checkpoint_dir.empty(),
              "train_mnist: --resume needs --checkpoint DIR");
  const c10::Device device = group.device();
  Examples train = to_tensors(data.train, options.train_limit, device);
  Examples test = to_tensors(data.test, 0, device);

  torch::manual_seed(static_cast<uint64_t>(options.seed));
  auto model = make_mnist_linear(data.train.rows * data.train.cols);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(options.lr));
  DistributedDataParallel ddp(*model, group);

  MnistSummary summary;
  int64_t seed = options.seed;
  if (options.resume) {
    if (auto state = load_checkpoint(options.checkpoint_dir, *model, optimizer, group)) {
      if (state->seed != seed) {
        spdlog::warn("resume: the checkpoint was trained with seed {}, not {}; continuing with {}",
                     state->seed, seed, state->seed);
        seed = state->seed;
      }
      summary.first_epoch = state->epoch + 1;
      spdlog::info("resume: continuing after epoch {} from {}", state->epoch, options.checkpoint_dir);
    } else {
      spdlog::info("resume: no checkpoint in {}; starting from epoch 1", options.checkpoint_dir);
    }
  }

  const int64_t n = train.x.size(0);
  for (int64_t epoch = summary.first_epoch; epoch <= options.epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    std::vector<int64_t> shard =
        shuffled_shard(n, group.size(), group.rank(), static_cast<uint64_t>(seed), epoch);
    at::Tensor order =
        torch::from_blob(shard.data(), {static_cast<int64_t>(shard.size())}, torch::kLong).to(device);
    at::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    int64_t batches = 0;
    for (int64_t b = 0; b < order.size(0); b += options.batch_size) {
      at::Tensor idx = order.narrow(0, b, std::min(options.batch_size, order.size(0) - b));
      at::Tensor loss = torch::nn::functional::cross_entropy(model->forward(train.x.index_select(0, idx)),
                                                             train.y.index_select(0, idx));
      optimizer.zero_grad();
      ddp.backward(loss);
      optimizer.step();
      loss_sum += loss.detach().to(torch::kDouble);
      ++batches;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    summary.train_seconds += seconds;
    auto loss_totals = group.sum_over_ranks({loss_sum.item<double>(), static_cast<double>(batches)});

    group.barrier();  // every rank has finished the epoch before evaluation
    Evaluation eval = evaluate(model, test, group);
    MnistEpoch result{epoch, loss_totals[0] / loss_totals[1], eval.acc, eval.loss, seconds};
    summary.test_acc = eval.acc;
    summary.epochs = epoch;
    if (!options.checkpoint_dir.empty() && group.rank() == 0) {
      save_checkpoint(options.checkpoint_dir, *model, optimizer, {epoch, seed, group.size(), {}});
    }
    on_epoch(result);
  }
  if (summary.first_epoch > options.epochs) {
    summary.epochs = summary.first_epoch - 1;
    summary.test_acc = evaluate(model, test, group).acc;
  }
  summary.param_digest = digest_of(*model);
  return summary;
}

}  // namespace dgcn
