// dgcn-spmm-bench: the SpMM kernel on a products-like sampled block against
// this machine's memory bandwidth (a STREAM-like copy and triad measured in
// the same run, interleaved with the SpMM repetitions so both see the same
// load), plus the two ways of the backward pass (Note [SpMM backward]) and the
// dense transform that the aggregation-order cost model weighs it against.
// Prints one JSON object on stdout.
#include <ATen/Parallel.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "models/cpu/spmm_kernel.h"
#include "models/cpu_allocator.h"
#include "models/gcn.h"
#include "models/spmm.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Options {
  std::vector<int64_t> fanouts{15, 10, 5};
  std::vector<double> new_fraction{0.97, 0.85, 0.6};
  int64_t seeds = 1024;
  int64_t features = 100;
  int64_t out_features = 128;
  int64_t classes = 47;
  int threads = 0;
  int reps = 10;
  int64_t stream_mb = 256;
  std::string device = "cpu";
  uint64_t seed = 1;
};

// Block 0 of a [15,10,5]-style batch with the sampler's numbering: the nodes
// a hop reaches are numbered in discovery order, and a sampled neighbour is a
// new node with probability new_fraction[h] (else one seen before, uniformly).
// The defaults give ~140k dst rows, ~520k src nodes and ~800k entries, the
// sizes of an ogbn-products batch of 1024 seeds.
dgcn::CsrTensor products_like_block(const Options& o, std::vector<int64_t>& within) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> coin(0, 1);
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  int64_t discovered = o.seeds;
  int64_t hop_begin = 0, hop_end = o.seeds;
  within = {o.seeds};  // within[h]: nodes within h hops
  const auto layers = static_cast<int64_t>(o.fanouts.size());
  for (int64_t h = 0; h < layers; ++h) {
    for (int64_t r = hop_begin; r < hop_end; ++r) {
      for (int64_t k = 0; k < o.fanouts[h]; ++k) {
        if (coin(rng) < o.new_fraction[h]) {
          indices.push_back(static_cast<int32_t>(discovered++));
        } else {
          indices.push_back(
              static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, discovered - 1)(rng)));
        }
      }
      indptr.push_back(static_cast<int64_t>(indices.size()));
    }
    hop_begin = hop_end;
    hop_end = discovered;
    within.push_back(discovered);
  }
  dgcn::CsrTensor a;
  a.num_rows = static_cast<int64_t>(indptr.size()) - 1;
  a.num_cols = discovered;
  a.indptr = torch::tensor(indptr, torch::kLong);
  a.indices = torch::from_blob(indices.data(), {static_cast<int64_t>(indices.size())}, torch::kInt).clone();
  a.values = torch::rand({static_cast<int64_t>(indices.size())});
  return a;
}

// The first `rows` rows of a, as a block over the first `cols` columns: the
// blocks of one batch nest this way (sampling/sampled_batch.h).
dgcn::CsrTensor row_prefix(const dgcn::CsrTensor& a, int64_t rows, int64_t cols) {
  dgcn::CsrTensor b;
  b.num_rows = rows;
  b.num_cols = cols;
  b.indptr = a.indptr.narrow(0, 0, rows + 1);
  const int64_t nnz = b.indptr[rows].item<int64_t>();
  b.indices = a.indices.narrow(0, 0, nnz);
  b.values = a.values.narrow(0, 0, nnz);
  return b;
}

// Distinct columns a references: the x rows SpMM must read at least once.
int64_t distinct_columns(const dgcn::CsrTensor& a) {
  std::vector<uint8_t> seen(static_cast<size_t>(a.num_cols), 0);
  const auto idx = a.indices.to(torch::kCPU).to(torch::kLong);
  const int64_t* p = idx.data_ptr<int64_t>();
  int64_t n = 0;
  for (int64_t e = 0; e < idx.numel(); ++e) {
    uint8_t& s = seen[static_cast<size_t>(p[e])];
    n += 1 - s;
    s = 1;
  }
  return n;
}

// Bytes of the 64-byte lines that hold x's row of every entry (x's rows
// start at `x_base` with `row_bytes` between them): a 400-byte row spans 7.
double gathered_line_bytes(const dgcn::CsrTensor& a, uintptr_t x_base, int64_t row_bytes) {
  const auto idx = a.indices.to(torch::kCPU).to(torch::kLong);
  const int64_t* p = idx.data_ptr<int64_t>();
  double bytes = 0;
  for (int64_t e = 0; e < idx.numel(); ++e) {
    const uintptr_t begin = x_base + static_cast<uintptr_t>(p[e] * row_bytes);
    const uintptr_t end = begin + static_cast<uintptr_t>(row_bytes);
    bytes += static_cast<double>(((end + 63) / 64 - begin / 64) * 64);
  }
  return bytes;
}

void sync(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

// Best wall time of `reps` runs of f, interleaved by the caller.
struct Best {
  double s = 1e30;
  void add(double t) { s = std::min(s, t); }
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"dgcn-spmm-bench: SpMM on a products-like sampled block vs this machine's memory bandwidth"};
  app.add_option("--fanouts", o.fanouts, "Fanouts of the modelled batch, hop 0 first (default 15 10 5)")
      ->delimiter(',');
  app.add_option("--new-fraction", o.new_fraction,
                 "Per hop, the chance a sampled neighbour is a node not seen before (default 0.97,0.85,0.6)")
      ->delimiter(',');
  app.add_option("--seeds", o.seeds, "Seeds of the modelled batch (default 1024)")
      ->check(CLI::PositiveNumber);
  app.add_option("--features", o.features, "Width of x: features aggregated per entry (default 100)")
      ->check(CLI::PositiveNumber);
  app.add_option("--out-features", o.out_features,
                 "Output width of the dense transform measured (default 128)")
      ->check(CLI::PositiveNumber);
  app.add_option("--classes", o.classes, "Classes of the model of the training-step measurement (default 47)")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", o.threads, "Threads (default: all cores)")->check(CLI::NonNegativeNumber);
  app.add_option("--reps", o.reps, "Repetitions; the best time counts (default 10)")
      ->check(CLI::PositiveNumber);
  app.add_option("--stream-mb", o.stream_mb, "Size of each STREAM array in MiB (default 256)")
      ->check(CLI::PositiveNumber);
  app.add_option("--device", o.device, "cpu or cuda (default cpu)")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--seed", o.seed, "Seed of the synthetic block (default 1)");
  CLI11_PARSE(app, argc, argv);
  // stdout carries the JSON result only; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn-spmm-bench"));
  if (o.new_fraction.size() != o.fanouts.size()) {
    std::cerr << "dgcn-spmm-bench: --new-fraction needs one value per fanout (" << o.fanouts.size() << ")\n";
    return 1;
  }
  try {
    dgcn::install_caching_cpu_allocator(size_t{4} << 30);
    if (o.threads > 0) at::set_num_threads(o.threads);
    const int threads = at::get_num_threads();
    const torch::Device device(o.device == "cuda" ? torch::kCUDA : torch::kCPU);
    if (device.is_cuda() && (!dgcn::spmm_has_cuda() || !torch::cuda::is_available())) {
      std::cerr << "dgcn-spmm-bench: --device cuda needs a CUDA build and a visible GPU\n";
      return 1;
    }
    torch::manual_seed(static_cast<int64_t>(o.seed));
    spdlog::info("building a products-like block ...");
    std::vector<int64_t> within;
    const dgcn::CsrTensor host = products_like_block(o, within);
    const dgcn::CsrTensor a = host.to(device);
    const int64_t nnz = a.nnz(), rows = a.num_rows, cols = a.num_cols, f = o.features;
    const int64_t distinct = distinct_columns(host);
    spdlog::info("block: {} dst x {} src, {} entries ({} distinct src); {} threads, {}", rows, cols, nnz,
                 distinct, threads, dgcn::cpu::simd_level());
    const auto x = torch::rand({cols, f}, torch::TensorOptions().device(device));
    const auto dy = torch::rand({rows, f}, torch::TensorOptions().device(device));
    const auto w = torch::rand({f, o.out_features}, torch::TensorOptions().device(device));
    const auto z = torch::rand({rows, f}, torch::TensorOptions().device(device));

    // STREAM arrays (float), touched once before timing.
    const int64_t n = o.stream_mb * (int64_t{1} << 20) / 4;
    auto sa = torch::ones({n}, torch::TensorOptions().device(device));
    auto sb = torch::ones({n}, torch::TensorOptions().device(device));
    auto sc = torch::ones({n}, torch::TensorOptions().device(device));

    Best copy, triad, forward, build_t, spmm_t, scatter, gemm;
    dgcn::CsrTensor t = dgcn::transpose(a);
    for (int rep = 0; rep < o.reps; ++rep) {
      sync(device);
      auto t0 = Clock::now();
      if (device.is_cuda()) {
        sa.copy_(sb);
      } else {
        float* pa = sa.data_ptr<float>();
        const float* pb = sb.data_ptr<float>();
        at::parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) { std::copy(pb + b, pb + e, pa + b); });
      }
      sync(device);
      copy.add(seconds_since(t0));
      t0 = Clock::now();
      if (device.is_cuda()) {
        at::add_out(sa, sb, sc, 1.5);
      } else {
        float* pa = sa.data_ptr<float>();
        const float* pb = sb.data_ptr<float>();
        const float* pc = sc.data_ptr<float>();
        at::parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) pa[i] = pb[i] + 1.5f * pc[i];
        });
      }
      sync(device);
      triad.add(seconds_since(t0));

      t0 = Clock::now();
      auto y = dgcn::spmm(a, x);
      sync(device);
      forward.add(seconds_since(t0));

      t0 = Clock::now();
      t = dgcn::transpose(a);
      sync(device);
      build_t.add(seconds_since(t0));
      t0 = Clock::now();
      auto dx = dgcn::spmm(t, dy);
      sync(device);
      spmm_t.add(seconds_since(t0));
      t0 = Clock::now();
      auto dx2 = dgcn::spmm_transpose_op(a, dy);
      sync(device);
      scatter.add(seconds_since(t0));

      t0 = Clock::now();
      auto g = torch::mm(z, w);
      sync(device);
      gemm.add(seconds_since(t0));
    }

    // One training step of the classic model (a GCN layer per fanout with
    // --out-features hidden units, a Linear head) on the batch's nested blocks.
    const auto layers = static_cast<int64_t>(o.fanouts.size());
    std::vector<dgcn::CsrTensor> blocks;
    nlohmann::json block_shapes = nlohmann::json::array();
    for (int64_t l = 0; l < layers; ++l) {
      blocks.push_back(row_prefix(host, within[layers - 1 - l], within[layers - l]).to(device));
      block_shapes.push_back({blocks.back().num_rows, blocks.back().num_cols, blocks.back().nnz()});
    }
    dgcn::GcnOptions g;
    g.in_features = f;
    g.hidden = o.out_features;
    g.num_classes = o.classes;
    g.num_layers = layers;
    g.linear_head = true;
    dgcn::Gcn model(g);
    model->to(device);
    torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(0.01));
    const auto target =
        torch::randint(0, o.classes, {o.seeds}, torch::TensorOptions().dtype(torch::kLong).device(device));
    Best step_forward, step_backward, step_optimizer;
    for (int rep = 0; rep < o.reps; ++rep) {
      adam.zero_grad();
      auto t0 = Clock::now();
      auto loss = torch::nn::functional::cross_entropy(model->forward(blocks, x), target);
      sync(device);
      step_forward.add(seconds_since(t0));
      t0 = Clock::now();
      loss.backward();
      sync(device);
      step_backward.add(seconds_since(t0));
      t0 = Clock::now();
      adam.step();
      sync(device);
      step_optimizer.add(seconds_since(t0));
    }

    const double fb = 4.0 * static_cast<double>(f);
    // Bytes the kernel must move at least: every array once, each distinct x row once.
    const double compulsory = static_cast<double>(rows + 1) * 8 + static_cast<double>(nnz) * 8 +
                              static_cast<double>(distinct) * fb + static_cast<double>(rows) * fb;
    // Bytes it streams through the cache hierarchy: one x row per entry.
    const double gathered = compulsory - static_cast<double>(distinct) * fb + static_cast<double>(nnz) * fb;
    // Lines moved if no x row stays in cache between its uses: whole lines of
    // every entry's row, y written and read for ownership (ordinary stores).
    // Rows served from cache move nothing, so this bounds the traffic from above.
    const double line_traffic = gathered_line_bytes(host, reinterpret_cast<uintptr_t>(x.data_ptr()), f * 4) +
                                2.0 * rows * fb + static_cast<double>(rows + 1) * 8 +
                                static_cast<double>(nnz) * 8;
    const double triad_gbs = 3.0 * 4 * static_cast<double>(n) / triad.s / 1e9;
    const double copy_gbs = 2.0 * 4 * static_cast<double>(n) / copy.s / 1e9;
    const double spmm_gbs = compulsory / forward.s / 1e9;
    const double gemm_flops = 2.0 * static_cast<double>(rows) * static_cast<double>(f) * o.out_features;
    // Measured cost of one sparse multiply-add relative to one dense one.
    const double sparse_cost = (forward.s / (static_cast<double>(nnz) * f)) /
                               (gemm.s / (static_cast<double>(rows) * f * o.out_features));
    nlohmann::json out = {
        {"benchmark", "spmm"},
        {"device", o.device},
        {"threads", threads},
        {"simd", dgcn::cpu::simd_level()},
        {"block",
         {{"source", "synthetic products-like"},
          {"num_dst", rows},
          {"num_src", cols},
          {"nnz", nnz},
          {"distinct_src", distinct},
          {"features", f}}},
        {"stream", {{"array_mib", o.stream_mb}, {"copy_gbs", copy_gbs}, {"triad_gbs", triad_gbs}}},
        {"forward",
         {{"ms", forward.s * 1e3},
          {"compulsory_gbs", spmm_gbs},
          {"gathered_gbs", gathered / forward.s / 1e9},
          {"line_traffic_gbs", line_traffic / forward.s / 1e9},
          {"line_traffic_fraction_of_copy", line_traffic / forward.s / 1e9 / copy_gbs},
          {"fraction_of_triad", spmm_gbs / triad_gbs},
          {"fraction_of_copy", spmm_gbs / copy_gbs}}},
        {"backward",
         {{"transpose_build_ms", build_t.s * 1e3},
          {"transposed_spmm_ms", spmm_t.s * 1e3},
          {"transposed_csr_total_ms", (build_t.s + spmm_t.s) * 1e3},
          {"transpose_op_ms", scatter.s * 1e3},
          {"transpose_op_note", device.is_cuda() ? "CUSPARSE_OPERATION_TRANSPOSE" : "serial scatter"}}},
        {"gemm",
         {{"shape", {rows, f, o.out_features}},
          {"ms", gemm.s * 1e3},
          {"gflops", gemm_flops / gemm.s / 1e9},
          {"sparse_to_dense_cost_measured", sparse_cost},
          {"sparse_to_dense_cost_model", dgcn::kSparseToDenseCost}}},
        {"train_step",
         {{"model", fmt::format("{} GCN layers ({} -> {}), Linear head ({} classes), Adam", layers, f,
                                o.out_features, o.classes)},
          {"blocks_dst_src_nnz", block_shapes},
          {"forward_ms", step_forward.s * 1e3},
          {"backward_ms", step_backward.s * 1e3},
          {"optimizer_ms", step_optimizer.s * 1e3},
          {"total_ms", (step_forward.s + step_backward.s + step_optimizer.s) * 1e3}}},
        {"reps", o.reps},
    };
    std::cout << out.dump() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "dgcn-spmm-bench: " << e.what() << "\n";
    return 1;
  }
}
