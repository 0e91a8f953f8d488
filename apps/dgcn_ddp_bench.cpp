// dgcn-ddp-bench: what gradient sync costs. Per step: training without sync,
// with the DDP module (all-reduce overlapping backward), and with one flat
// all-reduce after backward; plus a bare c10d all-reduce of the same buckets.
// Two models: a wide MLP (~25M parameters: bandwidth-bound sync) and the
// classic GCN (100 -> 128 -> 128 -> 47, ~35k parameters: latency-bound sync)
// on one products-like sampled batch. Rank 0 prints one JSON object on stdout.
//
//   dgcn-ddp-bench --nproc-per-node 2 --width 2048 --layers 6
//   dgcn-ddp-bench --nproc-per-node 2 --model gcn --seeds 1024
#include <c10/util/Exception.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <random>

#include "distributed/ddp.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "models/gcn.h"

namespace {

using namespace dgcn;
using Clock = std::chrono::steady_clock;

struct BenchOptions {
  std::string model = "mlp";
  int64_t width = 2048;
  int64_t layers = 6;
  int64_t batch = 32;
  // GCN: the classic model's sizes and one sampled batch of `seeds` seeds.
  int64_t features = 100;
  int64_t hidden = 128;
  int64_t classes = 47;
  std::vector<int64_t> fanouts{15, 10, 5};
  int64_t seeds = 1024;
  int steps = 8;
  int warmup = 2;
};

// The blocks of one sampled batch in forward order (blocks[0] the widest),
// numbered as the sampler numbers them: the nodes a hop reaches in discovery
// order, a sampled neighbour new with probability 0.97, 0.85, 0.6 at hops 0,
// 1, 2 (else one seen before). With [15, 10, 5] and 1024 seeds that is
// ogbn-products' ~520k nodes per batch (dgcn-spmm-bench models it the same
// way). Values 1/fanout: a mean over the sampled neighbours. Seeded by rank,
// so the ranks train on different batches of one shape.
std::vector<dgcn::CsrTensor> products_like_blocks(const BenchOptions& o, int rank) {
  std::mt19937_64 rng(1000 + rank);
  std::uniform_real_distribution<double> coin(0, 1);
  const std::vector<double> new_fraction{0.97, 0.85, 0.6};
  std::vector<int64_t> indptr{0}, within{o.seeds};
  std::vector<int32_t> indices;
  int64_t discovered = o.seeds, hop_begin = 0;
  for (size_t h = 0; h < o.fanouts.size(); ++h) {
    const double p_new = new_fraction[std::min(h, new_fraction.size() - 1)];
    for (int64_t r = hop_begin; r < within.back(); ++r) {
      for (int64_t k = 0; k < o.fanouts[h]; ++k) {
        const bool fresh = coin(rng) < p_new;
        indices.push_back(static_cast<int32_t>(
            fresh ? discovered++ : std::uniform_int_distribution<int64_t>(0, discovered - 1)(rng)));
      }
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
    hop_begin = within.back();
    within.push_back(discovered);
  }
  const at::Tensor all_indptr = torch::tensor(indptr, torch::kLong);
  const at::Tensor all_indices =
      torch::from_blob(indices.data(), {static_cast<int64_t>(indices.size())}, torch::kInt).clone();
  std::vector<dgcn::CsrTensor> blocks;
  const auto layers = static_cast<int64_t>(o.fanouts.size());
  for (int64_t l = 0; l < layers; ++l) {
    // Layer l's dst nodes are those within L-1-l hops, its src nodes those within L-l.
    dgcn::CsrTensor b;
    b.num_rows = within[layers - 1 - l];
    b.num_cols = within[layers - l];
    b.indptr = all_indptr.narrow(0, 0, b.num_rows + 1);
    const int64_t nnz = indptr[b.num_rows];
    b.indices = all_indices.narrow(0, 0, nnz);
    b.values = torch::full({nnz}, 1.0f / static_cast<float>(o.fanouts[layers - 1 - l]));
    blocks.push_back(b);
  }
  return blocks;
}

torch::nn::Sequential make_mlp(const BenchOptions& o) {
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
std::vector<double> time_modes(ProcessGroup& group, const BenchOptions& o,
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
    std::vector<double> all(group.size(), 0.0);
    all[group.rank()] = median(mode_ms);
    all = group.sum_over_ranks(all);
    slowest.push_back(*std::max_element(all.begin(), all.end()));
  }
  return slowest;
}

// Times every mode on `model` with the loss `loss_of`; `info` describes the
// model and starts the JSON object.
nlohmann::json run(ProcessGroup& group, const BenchOptions& o, torch::nn::Module& model,
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

nlohmann::json run_mlp(ProcessGroup& group, const BenchOptions& o) {
  torch::manual_seed(0);
  auto model = make_mlp(o);
  at::Tensor x = torch::randn({o.batch, o.width}), target = torch::randn({o.batch, o.width});
  return run(group, o, *model, [&] { return torch::mse_loss(model->forward(x), target); },
             {{"model", "mlp"}, {"width", o.width}, {"layers", o.layers}, {"batch", o.batch}});
}

nlohmann::json run_gcn(ProcessGroup& group, const BenchOptions& o) {
  torch::manual_seed(0);
  dgcn::GcnOptions g;
  g.in_features = o.features;
  g.hidden = o.hidden;
  g.num_classes = o.classes;
  g.num_layers = static_cast<int64_t>(o.fanouts.size());
  dgcn::Gcn model(g);
  const std::vector<dgcn::CsrTensor> blocks = products_like_blocks(o, group.rank());
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

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn"));
  CLI::App app{
      "dgcn-ddp-bench: step time with and without gradient sync, and all-reduce throughput, on a wide "
      "MLP or the classic GCN. Rank 0 prints one JSON object."};
  LaunchOptions launch;
  BenchOptions o;
  app.add_option("--model", o.model,
                 "mlp: a stack of wide Linear layers; gcn: the classic GCN on a products-like sampled batch "
                 "(default mlp)")
      ->check(CLI::IsMember({"mlp", "gcn"}));
  app.add_option("--width", o.width, "Width of each Linear layer (default 2048)")->check(CLI::PositiveNumber);
  app.add_option("--layers", o.layers, "Number of Linear layers (default 6: ~25M parameters)")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", o.batch, "Rows per rank per step (default 32)")->check(CLI::PositiveNumber);
  app.add_option("--features", o.features, "GCN input features (default 100)")->check(CLI::PositiveNumber);
  app.add_option("--hidden", o.hidden, "GCN hidden features (default 128)")->check(CLI::PositiveNumber);
  app.add_option("--classes", o.classes, "GCN classes (default 47)")->check(CLI::PositiveNumber);
  app.add_option("--num-neighbors", o.fanouts, "GCN fanouts, one per layer, hop 0 first (default 15,10,5)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--seeds", o.seeds, "GCN seeds per rank per step (default 1024)")
      ->check(CLI::PositiveNumber);
  app.add_option("--steps", o.steps, "Timed steps per mode (default 8; the median is reported)")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "Untimed steps before each mode (default 2)")
      ->check(CLI::NonNegativeNumber);
  add_launch_flags(app, launch);
  CLI11_PARSE(app, argc, argv);
  try {
    if (auto code = dgcn::launch_if_requested(launch, argc, argv)) return *code;
    dgcn::RankEnv env = dgcn::rank_env_from_process();
    auto group = dgcn::ProcessGroup::create(env, {dgcn::CommBackend::kGloo, launch.timeout});
    nlohmann::json result = o.model == "gcn" ? run_gcn(*group, o) : run_mlp(*group, o);
    group->shutdown();
    if (env.rank == 0) std::cout << result.dump() << std::endl;
    return 0;
  } catch (const c10::Error& e) {
    spdlog::error("{}", e.what_without_backtrace());
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  }
  return 1;
}
