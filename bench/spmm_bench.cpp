// See bench/spmm_bench.h.
#include "bench/spmm_bench.h"

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/timing.h"
#include "bench/device_sync.h"
#include "models/cpu/spmm_kernel.h"
#include "models/gcn.h"
#include "models/spmm.h"

namespace dgcn {
namespace {

using bench::sync;

// The whole batch as one CSR tensor (every expanded row), values uniform in
// [0, 1) from LibTorch's generator.
CsrTensor whole_block(const ProductsBatch& b) {
  CsrTensor a;
  a.num_rows = b.num_rows();
  a.num_cols = b.num_nodes();
  a.indptr = torch::tensor(b.indptr, torch::kLong);
  a.indices = torch::tensor(b.indices, torch::kInt);
  a.values = torch::rand({static_cast<int64_t>(b.indices.size())});
  return a;
}

// Layer l of the batch's GCN: a row prefix of the whole block (blocks nest).
CsrTensor layer_block(const ProductsBatch& b, const CsrTensor& whole, int64_t l) {
  CsrTensor a;
  a.num_rows = b.layer_rows(l);
  a.num_cols = b.layer_cols(l);
  a.indptr = whole.indptr.narrow(0, 0, a.num_rows + 1);
  a.indices = whole.indices.narrow(0, 0, b.layer_nnz(l));
  a.values = whole.values.narrow(0, 0, b.layer_nnz(l));
  return a;
}

// Distinct columns a references: the x rows SpMM must read at least once.
int64_t distinct_columns(const CsrTensor& a) {
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
double gathered_line_bytes(const CsrTensor& a, uintptr_t x_base, int64_t row_bytes) {
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

// Best wall time of `reps` runs of f, interleaved by the caller.
struct Best {
  double s = 1e30;
  void add(double t) { s = std::min(s, t); }
};

}  // namespace

nlohmann::json run_spmm_bench(const SpmmBenchOptions& o) {
  DGCN_CHECK(o.batch.new_fraction.size() == o.batch.fanouts.size(),
             "spmm bench: new_fraction has {} values for {} fanouts (one per fanout)",
             o.batch.new_fraction.size(), o.batch.fanouts.size());
  DGCN_CHECK(o.device == "cpu" || o.device.rfind("cuda", 0) == 0,
             "spmm bench: device '{}' (cpu, cuda or cuda:N)", o.device);
  if (o.threads > 0) at::set_num_threads(o.threads);
  const int threads = at::get_num_threads();
  const torch::Device device(o.device);  // "cpu", "cuda", "cuda:N"
  DGCN_CHECK(!device.is_cuda() || (spmm_has_cuda() && torch::cuda::is_available()),
             "spmm bench: device cuda needs a CUDA build and a visible GPU");
  torch::manual_seed(static_cast<int64_t>(o.batch.seed));
  spdlog::info("building a products-like block ...");
  const ProductsBatch batch = products_batch(o.batch);
  const CsrTensor host = whole_block(batch);
  const CsrTensor a = host.to(device);
  const int64_t nnz = a.nnz(), rows = a.num_rows, cols = a.num_cols, f = o.features;
  const int64_t distinct = distinct_columns(host);
  spdlog::info("block: {} dst x {} src, {} entries ({} distinct src); {} threads, {}", rows, cols, nnz,
               distinct, threads, cpu::simd_level());
  const auto x = torch::rand({cols, f}, torch::TensorOptions().device(device));
  const auto dy = torch::rand({rows, f}, torch::TensorOptions().device(device));
  const auto w = torch::rand({f, o.out_features}, torch::TensorOptions().device(device));
  const auto z = torch::rand({rows, f}, torch::TensorOptions().device(device));
  // The same x and dy in bf16 (Note [bf16 SpMM]): half the bytes per row read.
  const auto x_bf16 = x.to(torch::kBFloat16);
  const auto dy_bf16 = dy.to(torch::kBFloat16);

  // STREAM arrays (float), touched once before timing.
  const int64_t n = o.stream_mb * (int64_t{1} << 20) / 4;
  auto sa = torch::ones({n}, torch::TensorOptions().device(device));
  auto sb = torch::ones({n}, torch::TensorOptions().device(device));
  auto sc = torch::ones({n}, torch::TensorOptions().device(device));

  Best copy, triad, forward, build_t, spmm_t, scatter, gemm, forward_bf16, forward_bf16_to_fp32, spmm_t_bf16;
  CsrTensor t = transpose(a);
  const auto stream_copy = [&] {
    if (device.is_cuda()) {
      sa.copy_(sb);
    } else {
      float* pa = sa.data_ptr<float>();
      const float* pb = sb.data_ptr<float>();
      at::parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) { std::copy(pb + b, pb + e, pa + b); });
    }
    sync(device);
  };
  // Every SpMM timed after a pass over the STREAM arrays (the float32
  // forward after the triad): the last-level cache here (480 MiB reported)
  // holds much of a bf16 x (100 MiB) after a run, so back to back the
  // second of two runs would read x from cache.
  const auto flush = stream_copy;
  for (int rep = 0; rep < o.reps; ++rep) {
    sync(device);
    auto t0 = Clock::now();
    stream_copy();
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
    auto y = spmm(a, x);
    sync(device);
    forward.add(seconds_since(t0));

    // bf16 right after fp32 in every rep, so the ratio sees the same load.
    flush();
    t0 = Clock::now();
    auto y_bf16 = spmm(a, x_bf16);
    sync(device);
    forward_bf16.add(seconds_since(t0));
    flush();
    t0 = Clock::now();
    auto y_bf16_fp32 = spmm(a, x_bf16, torch::kFloat);
    sync(device);
    forward_bf16_to_fp32.add(seconds_since(t0));

    t0 = Clock::now();
    t = transpose(a);
    sync(device);
    build_t.add(seconds_since(t0));
    flush();
    t0 = Clock::now();
    auto dx = spmm(t, dy);
    sync(device);
    spmm_t.add(seconds_since(t0));
    flush();
    t0 = Clock::now();
    auto dx_bf16 = spmm(t, dy_bf16);
    sync(device);
    spmm_t_bf16.add(seconds_since(t0));
    t0 = Clock::now();
    auto dx2 = spmm_transpose_op(a, dy);
    sync(device);
    scatter.add(seconds_since(t0));

    t0 = Clock::now();
    auto g = torch::mm(z, w);
    sync(device);
    gemm.add(seconds_since(t0));
  }

  // One training step of the classic model (a GCN layer per fanout with
  // --out-features hidden units, a Linear head) on the batch's nested blocks.
  const int64_t layers = batch.num_layers();
  std::vector<CsrTensor> blocks;
  nlohmann::json block_shapes = nlohmann::json::array();
  for (int64_t l = 0; l < layers; ++l) {
    blocks.push_back(layer_block(batch, host, l).to(device));
    block_shapes.push_back({blocks.back().num_rows, blocks.back().num_cols, blocks.back().nnz()});
  }
  GcnOptions g;
  g.in_features = f;
  g.hidden = o.out_features;
  g.num_classes = o.classes;
  g.num_layers = layers;
  g.linear_head = true;
  Gcn model(g);
  model->to(device);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(0.01));
  const auto target = torch::randint(0, o.classes, {o.batch.seeds},
                                     torch::TensorOptions().dtype(torch::kLong).device(device));
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

  // The forward's bytes with `xb` bytes per x element and `yb` per y element.
  struct Bytes {
    double compulsory, gathered, line_traffic;
  };
  const auto bytes_of = [&](const torch::Tensor& xt, double xb, double yb) {
    const double row_x = xb * static_cast<double>(f), row_y = yb * static_cast<double>(f);
    const double index = static_cast<double>(rows + 1) * 8 + static_cast<double>(nnz) * 8;
    Bytes b;
    // Bytes the kernel must move at least: every array once, each distinct x row once.
    b.compulsory = index + static_cast<double>(distinct) * row_x + static_cast<double>(rows) * row_y;
    // Bytes it streams through the cache hierarchy: one x row per entry.
    b.gathered = b.compulsory - static_cast<double>(distinct) * row_x + static_cast<double>(nnz) * row_x;
    // Lines moved if no x row stays in cache between its uses: whole lines of
    // every entry's row, y written and read for ownership (ordinary stores).
    // Rows served from cache move nothing, so this bounds the traffic from above.
    b.line_traffic =
        gathered_line_bytes(host, reinterpret_cast<uintptr_t>(xt.data_ptr()), static_cast<int64_t>(row_x)) +
        2.0 * static_cast<double>(rows) * row_y + index;
    return b;
  };
  const Bytes fp32_bytes = bytes_of(x, 4, 4), bf16_bytes = bytes_of(x_bf16, 2, 2);
  const double compulsory = fp32_bytes.compulsory, gathered = fp32_bytes.gathered;
  const double line_traffic = fp32_bytes.line_traffic;
  const double triad_gbs = 3.0 * 4 * static_cast<double>(n) / triad.s / 1e9;
  const double copy_gbs = 2.0 * 4 * static_cast<double>(n) / copy.s / 1e9;
  const double spmm_gbs = compulsory / forward.s / 1e9;
  const double bf16_gbs = bf16_bytes.compulsory / forward_bf16.s / 1e9;
  const double gemm_flops = 2.0 * static_cast<double>(rows) * static_cast<double>(f) * o.out_features;
  // Measured cost of one sparse multiply-add relative to one dense one.
  const double sparse_cost = (forward.s / (static_cast<double>(nnz) * f)) /
                             (gemm.s / (static_cast<double>(rows) * f * o.out_features));
  nlohmann::json out = {
      {"benchmark", "spmm"},
      {"device", o.device},
      {"threads", threads},
      {"simd", cpu::simd_level()},
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
      // bf16 x and y (Note [bf16 SpMM]), timed in the same reps as "forward":
      // bytes/s of its own (half-size) rows, and its speed against float32's.
      {"forward_bf16",
       {{"ms", forward_bf16.s * 1e3},
        {"compulsory_gbs", bf16_gbs},
        {"gathered_gbs", bf16_bytes.gathered / forward_bf16.s / 1e9},
        {"line_traffic_gbs", bf16_bytes.line_traffic / forward_bf16.s / 1e9},
        {"line_traffic_fraction_of_copy", bf16_bytes.line_traffic / forward_bf16.s / 1e9 / copy_gbs},
        {"fraction_of_copy", bf16_gbs / copy_gbs},
        {"gbs_ratio_to_fp32", bf16_gbs / spmm_gbs},
        {"speedup_vs_fp32", forward.s / forward_bf16.s},
        {"float32_out_ms", forward_bf16_to_fp32.s * 1e3},
        {"transposed_spmm_ms", spmm_t_bf16.s * 1e3},
        {"transposed_spmm_speedup_vs_fp32", spmm_t.s / spmm_t_bf16.s}}},
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
        {"sparse_to_dense_cost_model", kSparseToDenseCost}}},
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
  return out;
}

}  // namespace dgcn
