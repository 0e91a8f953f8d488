// See bench/ddp_bench.h.
#include "bench/ddp_bench.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "bench/products_batch.h"
#include "distributed/ddp.h"
#include "distributed/process_group.h"
#include "models/gcn.h"

namespace dgcn {
namespace {

using Clock = std::chrono::steady_clock;

// The blocks of one products-like sampled batch in forward order (blocks[0]
// the widest), values 1/fanout: a mean over the sampled neighbours. Seeded
// by rank, so the ranks train on different batches of one shape.
std::vector<CsrTensor> products_like_blocks(const DdpBenchOptions& o, int rank) {
  ProductsBatchSpec spec;
  spec.fanouts = o.fanouts;
  spec.seeds = o.seeds;
  spec.seed = 1000 + static_cast<uint64_t>(rank);
  const ProductsBatch b = products_batch(spec);
  const at::Tensor indptr = torch::tensor(b.indptr, torch::kLong);
  const at::Tensor indices = torch::tensor(b.indices, torch::kInt);
  std::vector<CsrTensor> blocks;
  for (int64_t l = 0; l < b.num_layers(); ++l) {
    CsrTensor a;
    a.num_rows = b.layer_rows(l);
    a.num_cols = b.layer_cols(l);
    a.indptr = indptr.narrow(0, 0, a.num_rows + 1);
    a.indices = indices.narrow(0, 0, b.layer_nnz(l));
    a.values = torch::full({b.layer_nnz(l)}, 1.0f / static_cast<float>(o.fanouts[b.num_layers() - 1 - l]));
    blocks.push_back(a);
  }
  return blocks;
}

torch::nn::Sequential make_mlp(const DdpBenchOptions& o) {
  torch::nn::Sequential mlp;
  for (int64_t l = 0; l < o.layers; ++l) {
    mlp->push_back(torch::nn::Linear(o.width, o.width));
    mlp->push_back(torch::nn::ReLU());
  }
  return mlp;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Runs every mode once per round, warmup + steps rounds, a barrier before
// each step; returns each mode's median step in ms, taken as the slowest
// rank's (a synchronous job moves at that pace). Interleaving the modes
// spreads the noise of a shared machine evenly over them.
std::vector<double> time_modes(ProcessGroup& group, const DdpBenchOptions& o,
                               const std::vector<std::function<void()>>& modes) {
  std::vector<std::vector<double>> ms(modes.size());
  for (int i = 0; i < o.warmup + o.steps; ++i) {
    for (size_t m = 0; m < modes.size(); ++m) {
      group.barrier();
      auto start = Clock::now();
      modes[m]();
      double t = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (i >= o.warmup) ms[m].push_back(t);
    }
  }
  std::vector<double> slowest;
  for (auto& mode_ms : ms) {
    double slowest_rank = 0;
    for (const auto& theirs : all_gather(group, std::vector<double>{median(mode_ms)}))
      slowest_rank = std::max(slowest_rank, theirs[0]);
    slowest.push_back(slowest_rank);
  }
  return slowest;
}

// Times every mode on `model` with the loss `loss_of`; `info` describes the
// model and starts the JSON object.
nlohmann::json run(ProcessGroup& group, const DdpBenchOptions& o, torch::nn::Module& model,
                   const std::function<at::Tensor()>& loss_of, nlohmann::json info) {
  torch::optim::SGD sgd(model.parameters(), torch::optim::SGDOptions(0.01));
  std::vector<at::Tensor> params = model.parameters();
  int64_t numel = 0;
  for (const auto& p : params) numel += p.numel();

  DistributedDataParallel ddp(model, group);
  // Every mode trains the same model with the same gradient storage.
  auto no_sync = [&] {
    sgd.zero_grad();
    auto guard = ddp.no_sync();
    loss_of().backward();
    sgd.step();
  };
  auto overlapped = [&] {
    sgd.zero_grad();
    ddp.backward(loss_of());
    sgd.step();
  };
  // Backward, then every gradient in one flat buffer (allocated once: fresh
  // 100 MB buffers cost page faults that would swamp the comparison).
  at::Tensor flat_grads = torch::zeros({numel});
  auto after_backward = [&] {
    sgd.zero_grad();
    {
      auto guard = ddp.no_sync();
      loss_of().backward();
    }
    int64_t offset = 0;
    for (const auto& p : params) {
      flat_grads.narrow(0, offset, p.numel()).view_as(p).copy_(p.grad());
      offset += p.numel();
    }
    group.allreduce_sum(flat_grads).wait();
    flat_grads.div_(group.size());
    offset = 0;
    for (auto& p : params) {
      p.mutable_grad().copy_(flat_grads.narrow(0, offset, p.numel()).view_as(p));
      offset += p.numel();
    }
    sgd.step();
  };
  // The DDP module's buckets, all-reduced back to back with nothing else
  // running; and all the bytes as one flat tensor.
  std::vector<at::Tensor> buckets;
  for (const auto& b : ddp.buckets()) {
    int64_t n = 0;
    for (int64_t i : b) n += params[i].numel();
    buckets.push_back(torch::ones({n}));
  }
  buckets.back() = torch::ones({buckets.back().numel() + static_cast<int64_t>(params.size())});
  auto bare_buckets = [&] {
    std::vector<Work> works;
    for (auto& b : buckets) works.push_back(group.allreduce_sum(b));
    for (auto& w : works) w.wait();
  };
  auto bare_flat = [&] { group.allreduce_sum(flat_grads).wait(); };

  auto before = ddp.stats();
  std::vector<double> t =
      time_modes(group, o, {no_sync, overlapped, after_backward, bare_buckets, bare_flat});
  auto after = ddp.stats();
  const double local_ms = t[0], ddp_ms = t[1], after_backward_ms = t[2], bare_ms = t[3], bare_flat_ms = t[4];
  int64_t syncs = std::max<int64_t>(after.syncs - before.syncs, 1);
  double wait_ms = 1000.0 * (after.wait_seconds - before.wait_seconds) / syncs;
  int64_t bytes_per_step = (after.bytes_reduced - before.bytes_reduced) / syncs;
  double launched_early =
      static_cast<double>(after.launched_during_backward - before.launched_during_backward) /
      std::max<int64_t>(after.buckets_launched - before.buckets_launched, 1);

  // Step time that sync added; none measurable (<= 0: hidden behind backward
  // or below the noise) gives no meaningful rate.
  const double exposed_ms = ddp_ms - local_ms;
  const nlohmann::json effective_rate =
      exposed_ms > 0 ? nlohmann::json(bytes_per_step / (exposed_ms / 1000.0)) : nlohmann::json(nullptr);
  nlohmann::json result = {{"bench", "ddp_sync"}};
  result.update(info);
  result.update(
      {{"params", numel},
       {"world_size", group.size()},
       {"backend", backend_name(group.backend())},
       {"torch_threads", at::get_num_threads()},
       {"steps", o.steps},
       {"buckets", ddp.buckets().size()},
       {"bytes_per_step", bytes_per_step},
       {"fraction_of_buckets_launched_during_backward", launched_early},
       {"step_ms",
        {{"no_sync", local_ms}, {"ddp_overlapped", ddp_ms}, {"allreduce_after_backward", after_backward_ms}}},
       {"ddp_sync_overhead_ms", ddp_ms - local_ms},
       {"ddp_wait_after_backward_ms", wait_ms},
       {"bare_allreduce_ms", bare_ms},
       {"bare_flat_allreduce_ms", bare_flat_ms},
       // Bytes synchronized per second of step time that sync added, vs
       // the same bytes all-reduced alone.
       {"ddp_effective_bytes_per_s", effective_rate},
       {"bare_allreduce_bytes_per_s", bytes_per_step / (bare_ms / 1000.0)}});
  return result;
}

nlohmann::json run_mlp(ProcessGroup& group, const DdpBenchOptions& o) {
  torch::manual_seed(0);
  auto model = make_mlp(o);
  at::Tensor x = torch::randn({o.batch, o.width}), target = torch::randn({o.batch, o.width});
  return run(group, o, *model, [&] { return torch::mse_loss(model->forward(x), target); },
             {{"model", "mlp"}, {"width", o.width}, {"layers", o.layers}, {"batch", o.batch}});
}

nlohmann::json run_gcn(ProcessGroup& group, const DdpBenchOptions& o) {
  torch::manual_seed(0);
  GcnOptions g;
  g.in_features = o.features;
  g.hidden = o.hidden;
  g.num_classes = o.classes;
  g.num_layers = static_cast<int64_t>(o.fanouts.size());
  Gcn model(g);
  const std::vector<CsrTensor> blocks = products_like_blocks(o, group.rank());
  const at::Tensor x = torch::randn({blocks.front().num_cols, o.features});
  const at::Tensor y = torch::randint(0, o.classes, {o.seeds}, torch::kLong);
  nlohmann::json shapes = nlohmann::json::array(), widths = nlohmann::json::array({o.features});
  for (size_t l = 1; l < o.fanouts.size(); ++l) widths.push_back(o.hidden);
  widths.push_back(o.classes);
  for (const auto& b : blocks) shapes.push_back({b.num_rows, b.num_cols, b.nnz()});
  return run(group, o, *model, [&] { return torch::cross_entropy_loss(model->forward(blocks, x), y); },
             {{"model", "gcn"},
              {"widths", widths},
              {"fanouts", o.fanouts},
              {"seeds", o.seeds},
              {"blocks_rows_cols_nnz", shapes}});
}

}  // namespace

nlohmann::json run_ddp_bench(const RankEnv& env, std::chrono::milliseconds timeout,
                             const DdpBenchOptions& o) {
  auto group = ProcessGroup::create(env, {CommBackend::kGloo, timeout});
  nlohmann::json result = o.model == "gcn" ? run_gcn(*group, o) : run_mlp(*group, o);
  group->shutdown();
  return env.rank == 0 ? result : nlohmann::json();
}

}  // namespace dgcn
