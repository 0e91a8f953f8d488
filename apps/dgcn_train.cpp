// dgcn-train: trains a GCN on a .gcn store with sampled mini-batches
// (train/gcn_trainer.h), on one process or N ranks (train/gcn_run.h):
// --nproc-per-node N starts the local ranks (distributed/launcher.h), or
// torchrun / an srun wrapper sets RANK and friends. Rank 0 writes one JSON
// line per epoch to --metrics-out, the plot and the JSON summary line on
// stdout; progress goes to stderr.
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/parallel.h"
#include "datasets/synthetic.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "graph/gcn_format.h"
#include "models/cpu_allocator.h"
#include "models/spmm.h"
#include "train/gcn_run.h"
#include "train/omp_waits.h"

namespace {

struct AppOptions {
  std::string data;
  std::string preset = "small";
  std::string head = "none";
  std::string norm = "full";
  std::string device = "cpu";
  std::string eval = "full";
  std::string backend = "auto";
  std::string load = "auto";
  std::string cache_dir;
  std::string metrics_out;
  std::string plot;
  std::string optimizer = "adam";
  double cpu_cache_gb = 4;
};

// --metrics-out: lines appear in FILE.tmp as epochs finish; renamed to FILE at
// the end, so FILE only ever holds a complete run.
class MetricsFile {
 public:
  explicit MetricsFile(std::string path) : path_(std::move(path)) {
    if (path_.empty()) return;
    out_.open(path_ + ".tmp", std::ios::trunc);
    if (!out_) throw dgcn::Error("dgcn-train: cannot write --metrics-out " + path_ + ".tmp");
  }
  void write(const nlohmann::json& line) {
    if (!out_.is_open()) return;
    out_ << line.dump() << '\n';
    out_.flush();
  }
  void commit() {
    if (!out_.is_open()) return;
    out_.close();
    std::filesystem::rename(path_ + ".tmp", path_);
  }

 private:
  std::string path_;
  std::ofstream out_;
};

nlohmann::json epoch_json(const dgcn::EpochReport& r, const std::string& metric) {
  nlohmann::json j = {
      {"epoch", r.epoch},         {"loss", r.loss},       {"train_" + metric, r.train_metric},
      {"batches", r.batches},     {"epoch_s", r.epoch_s}, {"sampling_wait_s", r.sampling_wait_s},
      {"compute_s", r.compute_s}, {"other_s", r.other_s}, {"eval_s", r.eval_s}};
  if (r.valid_metric) j["valid_" + metric] = *r.valid_metric;
  if (r.test_metric) j["test_" + metric] = *r.test_metric;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  dgcn::reexec_with_passive_omp_waits(argv);  // Note [Passive OpenMP waits]
  AppOptions a;
  dgcn::TrainOptions o;
  int threads = 0;
  dgcn::LaunchOptions launch;
  dgcn::GcnRunOptions run;
  CLI::App app{
      "dgcn-train: train a GCN on sampled mini-batches (neighbour sampling, SpMM layers) and evaluate it by "
      "layer-wise full-neighbour inference. Without --data it trains on the synthetic 'small' preset."};
  app.add_option("--data", a.data, "Graph store (.gcn) to train on (from dgcn-prep)");
  app.add_option("--load", a.load,
                 "private: every rank decompresses its own copy; shared: the ranks of a machine map one "
                 "decompressed cache file read-only, so the graph is in memory once (Note [shared cache]); "
                 "auto: shared when a machine runs more than one rank (default auto)")
      ->check(CLI::IsMember({"auto", "private", "shared"}));
  app.add_option("--cache-dir", a.cache_dir,
                 "Where --load shared keeps the decompressed cache (default: next to --data)");
  app.add_option("--preset", a.preset,
                 "Synthetic preset generated in memory when --data is absent (default small)");
  app.add_option("--num-neighbors", o.fanouts,
                 "Fanouts, one per GCN layer, hop 0 first; -1 takes every neighbour (default 15,10,5)")
      ->delimiter(',');
  app.add_option("--batch-size", o.batch_size, "Seed nodes per mini-batch (default 1024)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-batches", o.max_batches,
                 "Train only the first N batches of every epoch (timing runs; default 0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--hidden", o.hidden, "Hidden features of every GCN layer (default 128)")
      ->check(CLI::PositiveNumber);
  app.add_option("--epochs", o.epochs, "Epochs to train (default 10)")->check(CLI::NonNegativeNumber);
  app.add_option("--lr", o.optimizer.lr, "Learning rate (default 0.01)")->check(CLI::PositiveNumber);
  app.add_option("--weight-decay", o.optimizer.weight_decay, "L2 weight decay on every parameter (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--weight-decay-first-layer-only", o.weight_decay_first_layer_only,
               "Apply --weight-decay to the first GCN layer only (Kipf & Welling's Cora setup)");
  app.add_option("--dropout", o.dropout, "Dropout after every hidden ReLU (default 0.5)")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--input-dropout", o.input_dropout,
                 "Dropout on the input features (default 0; Kipf & Welling's Cora setup uses 0.5)")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--optimizer", a.optimizer, "adam or sgd (default adam)")
      ->check(CLI::IsMember({"adam", "sgd"}));
  app.add_option("--momentum", o.optimizer.momentum, "SGD momentum (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option(
         "--head", a.head,
         "none: the last GCN layer outputs the classes; linear: every GCN layer outputs --hidden and a "
         "final Linear(hidden, classes) follows (default none)")
      ->check(CLI::IsMember({"none", "linear"}));
  app.add_option(
         "--norm", a.norm,
         "full: GCN normalization with full-graph degrees, sampled sums rescaled by degree/k (unbiased; "
         "exact with every neighbour); block: degrees inside the sampled subgraph, as PyG's GCNConv on a "
         "NeighborLoader batch (default full)")
      ->check(CLI::IsMember({"full", "block"}));
  app.add_flag("--normalize-features", o.normalize_features,
               "Divide every feature row by its sum before training");
  app.add_option("--device", a.device, "cpu or cuda (cuda:LOCAL_RANK with several ranks; default cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--backend", a.backend,
                 "Collective backend: gloo (CPU), nccl (--device cuda, CUDA builds) or auto (default)")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  app.add_option("--checkpoint", run.checkpoint_dir,
                 "Save a checkpoint into this directory after every epoch (rank 0; keeps the previous one)");
  app.add_flag("--resume", run.resume,
               "Continue from the newest checkpoint in --checkpoint DIR up to --epochs in total");
  app.add_option("--seed", o.seed,
                 "Seed of the weights, dropout and every epoch's shuffle and sampling (default 0)");
  app.add_option(
         "--threads", threads,
         "Compute threads per rank (default: DGCN_NUM_THREADS, or the cores shared by the local ranks)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--workers", o.loader_workers, "Sampler threads working ahead of the trainer (default 1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--prefetch", o.loader_queue, "Batches sampled ahead of the trainer (default 4)")
      ->check(CLI::PositiveNumber);
  bool gather_in_loader = false;
  app.add_flag("--gather-in-loader", gather_in_loader,
               "Have the sampler threads copy every batch's feature rows, as before; by default on the CPU "
               "the first layer reads them from the graph store (same model bit for bit, less work). For "
               "comparison runs");
  app.add_option("--eval", a.eval,
                 "full: layer-wise full-neighbour inference (exact); sampled: the sampled forward pass over "
                 "batches of evaluation nodes; none: no evaluation, for timing runs (default full)")
      ->check(CLI::IsMember({"full", "sampled", "none"}));
  app.add_option("--eval-num-neighbors", o.eval_fanouts,
                 "Fanouts of --eval sampled (default: --num-neighbors)")
      ->delimiter(',');
  app.add_option("--eval-batch-size", o.eval_batch_size, "Seeds per batch of --eval sampled (default 4096)")
      ->check(CLI::PositiveNumber);
  app.add_option("--eval-every", o.eval_every,
                 "Evaluate every N epochs; the last is always evaluated (default 1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--metrics-out", a.metrics_out, "Write one JSON line per epoch to FILE.jsonl");
  app.add_option("--plot", a.plot, "Draw loss and metric curves into FILE.png (gnuplot)");
  app.add_option("--cpu-cache-gb", a.cpu_cache_gb,
                 "Freed large CPU tensors kept for reuse, in GiB (default 4; see Note [CPU memory reuse])")
      ->check(CLI::NonNegativeNumber);
  add_launch_flags(app, launch);
  CLI11_PARSE(app, argc, argv);
  // stdout carries the JSON result only; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn-train"));

  if (run.resume && run.checkpoint_dir.empty()) {
    std::cerr << "dgcn-train: --resume needs --checkpoint DIR (the folder to resume from)\n";
    return 1;
  }
  try {
    if (auto code = dgcn::launch_if_requested(launch, argc, argv)) return *code;
    const dgcn::RankEnv env = dgcn::rank_env_from_process();
    if (env.world_size > 1) spdlog::set_pattern(fmt::format("[%H:%M:%S.%e] [rank {}] [%^%l%$] %v", env.rank));
    const auto start = std::chrono::steady_clock::now();
    dgcn::install_caching_cpu_allocator(static_cast<size_t>(a.cpu_cache_gb * (1 << 30)));
    if (threads == 0) {
      // The local ranks share this node's cores.
      threads = std::getenv("DGCN_NUM_THREADS") != nullptr
                    ? dgcn::default_num_threads()
                    : std::max(1, dgcn::default_num_threads() / env.local_world_size);
    }
    at::set_num_threads(threads);
    o.compute_threads = threads;
    o.input_from_store = !gather_in_loader;
    o.linear_head = a.head == "linear";
    o.optimizer.kind = dgcn::parse_optimizer(a.optimizer);
    o.norm = dgcn::parse_gcn_norm(a.norm);
    o.eval_mode = a.eval == "full"      ? dgcn::EvalMode::kFullNeighbour
                  : a.eval == "sampled" ? dgcn::EvalMode::kSampled
                                        : dgcn::EvalMode::kNone;
    if (a.device == "cuda") {
      if (!torch::cuda::is_available() || !dgcn::spmm_has_cuda()) {
        std::cerr << "dgcn-train: --device cuda needs a GPU and a build against a CUDA LibTorch\n";
        return 1;
      }
      o.device = c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(env.local_rank));
    }
    dgcn::CommBackend backend;
    try {
      backend = dgcn::parse_backend(a.backend, o.device);
    } catch (const c10::Error& e) {
      throw dgcn::Error(fmt::format("--backend {}: {}", a.backend, e.what_without_backtrace()));
    }
    auto group = dgcn::ProcessGroup::create(env, {backend, launch.timeout});
    const bool rank0 = group->rank() == 0;
    if (env.world_size > 1) spdlog::info("{} over {}", env.describe(), dgcn::backend_name(group->backend()));

    dgcn::GraphStore store;
    std::string source;
    if (a.data.empty()) {
      spdlog::info("no --data: generating the synthetic '{}' preset in memory", a.preset);
      store = dgcn::datasets::generate_synthetic(dgcn::datasets::synthetic_preset(a.preset), threads);
      source = "synthetic:" + a.preset;
    } else {
      dgcn::LoadOptions load;
      load.threads = threads;
      const bool shared = a.load == "shared" || (a.load == "auto" && env.local_world_size > 1);
      load.mode = shared ? dgcn::LoadMode::kSharedCache : dgcn::LoadMode::kPrivate;
      load.cache_dir = a.cache_dir;
      store = dgcn::load_gcn(a.data, load);
      source = a.data;
    }
    spdlog::info("{}: {} nodes, {} edges, {} features, {} classes ({}), train/valid/test {}/{}/{}", source,
                 store.num_nodes(), store.num_edges(), store.num_features, store.num_classes,
                 dgcn::task_name(store.task), store.train_nodes().size(), store.valid_nodes().size(),
                 store.test_nodes().size());

    const std::string metric = dgcn::metric_name(store.task);
    MetricsFile metrics(rank0 ? a.metrics_out : "");
    std::vector<dgcn::CurvePoint> curve;
    const dgcn::GcnRunSummary run_summary =
        dgcn::train_gcn(store, o, run, *group, [&](const dgcn::EpochReport& r, const dgcn::Trainer& trainer) {
          if (!rank0) return;
          curve = trainer.curve();
          metrics.write(epoch_json(r, metric));
          std::string eval;
          if (r.valid_metric) {
            eval = fmt::format("  valid {} {:.4f}  test {:.4f} ({:.1f} s)", metric, *r.valid_metric,
                               *r.test_metric, r.eval_s);
          }
          spdlog::info(
              "epoch {:>3}  loss {:.4f}  train {} {:.4f}{}  | {:.1f} s: wait {:.1f}, compute {:.1f}, other "
              "{:.1f}",
              r.epoch, r.loss, metric, r.train_metric, eval, r.epoch_s, r.sampling_wait_s, r.compute_s,
              r.other_s);
        });
    group->shutdown();
    if (!rank0) return 0;
    metrics.commit();
    if (!a.plot.empty() && !curve.empty()) {
      dgcn::plot_training_curves(curve, metric, a.plot);
      spdlog::info("wrote {}", a.plot);
    }
    const dgcn::TrainSummary& s = run_summary.train;
    nlohmann::json out = {
        {"data", source},
        {"device", a.device},
        {"world_size", run_summary.world_size},
        {"backend", dgcn::backend_name(group->backend())},
        {"first_epoch", run_summary.first_epoch},
        {"epochs", s.epochs},
        {"valid_" + metric, s.valid_metric},
        {"test_" + metric, s.test_metric},
        {"best_valid_" + metric, s.best_valid_metric},
        {"test_" + metric + "_at_best_valid", s.test_at_best_valid},
        {"best_epoch", s.best_epoch},
        {"train_s", s.train_s},
        {"eval_s", s.eval_s},
        {"total_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()},
        {"param_digest", s.param_digest}};
    if (o.eval_mode == dgcn::EvalMode::kNone) {  // not evaluated now (a resumed run may have a best epoch)
      out["valid_" + metric] = nullptr;
      out["test_" + metric] = nullptr;
    }
    if (s.best_epoch < 0) {  // never evaluated
      out["best_valid_" + metric] = nullptr;
      out["test_" + metric + "_at_best_valid"] = nullptr;
    }
    std::cout << out.dump() << std::endl;
    return 0;
  } catch (const c10::Error& e) {
    std::cerr << "dgcn-train: " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "dgcn-train: " << e.what() << "\n";
    return 1;
  }
}
