// dgcn-train: trains a GCN on a .gcn store with sampled mini-batches
// (train/gcn_trainer.h), on one process or N ranks (train/gcn_run.h):
// --nproc-per-node N starts the local ranks (distributed/launcher.h), or
// torchrun / an srun wrapper sets RANK and friends. Rank 0 appends one JSON
// line per epoch to --metrics-out (train/metrics_log.h), prints the JSON
// summary on stdout, then draws the plot; progress goes to stderr.
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <torch/cuda.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/cli/cli.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/parallel.h"
#include "base/timing.h"
#include "datasets/synthetic.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "graph/store_format.h"
#include "models/cpu_allocator.h"
#include "models/spmm.h"
#include "partition/partition_files.h"
#include "train/gcn_run.h"
#include "train/metrics_log.h"
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
  std::string seeds;  // "" = the default: local on a partitioned graph
  int threads = 0;
  bool gather_in_loader = false;
  double cpu_cache_gb = 4;
};

// What one epoch's batches exchanged on a partitioned graph: totals over
// ranks, and per batch of one rank (bytes that rank sent to the others;
// seconds its loader spent in the all-to-alls).
nlohmann::json exchange_json(const dgcn::EpochReport& r, int world_size) {
  const dgcn::ExchangeCounters& x = r.exchange;
  const double batches = std::max<double>(1.0, static_cast<double>(r.batches) * world_size);
  return {{"id_bytes", x.id_bytes},
          {"pick_bytes", x.pick_bytes},
          {"feature_bytes", x.feature_bytes},
          {"exchanges", x.exchanges},
          {"seconds", x.seconds},
          {"per_batch",
           {{"id_bytes", x.id_bytes / batches},
            {"pick_bytes", x.pick_bytes / batches},
            {"feature_bytes", x.feature_bytes / batches},
            {"bytes", (x.id_bytes + x.pick_bytes + x.feature_bytes) / batches},
            {"seconds", x.seconds / batches}}}};
}

nlohmann::json epoch_json(const dgcn::EpochReport& r, const std::string& metric, int world_size) {
  nlohmann::json j = {
      {"epoch", r.epoch},         {"loss", r.loss},       {"train_" + metric, r.train_metric},
      {"batches", r.batches},     {"epoch_s", r.epoch_s}, {"sampling_wait_s", r.sampling_wait_s},
      {"compute_s", r.compute_s}, {"other_s", r.other_s}, {"eval_s", r.eval_s}};
  if (r.valid_metric) j["valid_" + metric] = *r.valid_metric;
  if (r.test_metric) j["test_" + metric] = *r.test_metric;
  if (r.partitioned) j["exchange"] = exchange_json(r, world_size);
  return j;
}

// This process's peak resident memory (getrusage), in bytes.
double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

void add_flags(CLI::App& app, AppOptions& a, dgcn::TrainOptions& o, dgcn::GcnRunOptions& run) {
  using dgcn::cli::kNonNegative;
  using dgcn::cli::kPositive;
  app.add_option(
      "--data", a.data,
      "Graph store (.gcn, from dgcn-prep) to train on, or a partitioned graph's folder (from dgcn-prep "
      "partition: one rank per part, each loading only its part); without it the synthetic --preset is "
      "generated in memory");
  app.add_option(
         "--seeds", a.seeds,
         "Partitioned graphs: global trains every rank on the seeds a replicated run would give it (the "
         "same batches and weights, bit for bit); local (the default there) trains each rank on its own "
         "part's training nodes, equal batch counts on every rank, fewer rows fetched from other ranks")
      ->check(CLI::IsMember({"global", "local"}));
  app.add_option("--load", a.load,
                 "private: every rank decompresses its own copy; shared: the ranks of a machine map one "
                 "decompressed cache file read-only, so the graph is in memory once; auto: shared when a "
                 "machine runs more than one rank")
      ->check(CLI::IsMember({"auto", "private", "shared"}));
  app.add_option("--cache-dir", a.cache_dir,
                 "Where --load shared keeps the decompressed cache (empty: next to "
                 "--data)");
  app.add_option("--preset", a.preset, "Synthetic preset generated in memory when --data is absent")
      ->check(CLI::IsMember({"tiny", "small", "products"}));
  dgcn::cli::add_fanouts(app, "--num-neighbors", o.fanouts,
                         "Fanouts, one per GCN layer, hop 0 first; -1 takes every neighbour, 0 none");
  app.add_option("--batch-size", o.batch_size, "Seed nodes per mini-batch and rank")->check(kPositive);
  app.add_option("--max-batches", o.max_batches,
                 "Train only the first N batches of every epoch (timing runs; 0: "
                 "all)")
      ->check(kNonNegative);
  app.add_option("--hidden", o.hidden, "Hidden features of every GCN layer")->check(kPositive);
  app.add_option("--epochs", o.epochs,
                 "Epochs to train in total (numbered from 1; a resumed run counts the "
                 "checkpoint's)")
      ->check(kNonNegative);
  app.add_option("--lr", o.optimizer.lr, "Learning rate (a resumed run may change it)")->check(kPositive);
  app.add_option("--weight-decay", o.optimizer.weight_decay, "L2 weight decay on every parameter")
      ->check(kNonNegative);
  app.add_flag("--weight-decay-first-layer-only", o.weight_decay_first_layer_only,
               "Apply --weight-decay to the first GCN layer only (Kipf & Welling's Cora setup)");
  app.add_option("--dropout", o.dropout, "Dropout after every hidden ReLU")->check(CLI::Range(0.0, 0.99));
  app.add_option("--input-dropout", o.input_dropout,
                 "Dropout on the input features (Kipf & Welling's Cora setup uses 0.5)")
      ->check(CLI::Range(0.0, 0.99));
  app.add_option("--optimizer", a.optimizer, "adam or sgd")->check(CLI::IsMember({"adam", "sgd"}));
  app.add_option("--momentum", o.optimizer.momentum, "SGD momentum")->check(kNonNegative);
  app.add_option(
         "--head", a.head,
         "none: the last GCN layer outputs the classes; linear: every GCN layer outputs --hidden and a "
         "final Linear(hidden, classes) follows")
      ->check(CLI::IsMember({"none", "linear"}));
  app.add_option(
         "--norm", a.norm,
         "full: GCN normalization with full-graph degrees, sampled sums rescaled by degree/k (unbiased; "
         "exact with every neighbour); block: degrees inside the sampled subgraph, as PyG's GCNConv on "
         "a NeighborLoader batch")
      ->check(CLI::IsMember({"full", "block"}));
  app.add_flag(
      "--normalize-features", o.normalize_features,
      "PyG's NormalizeFeatures: shift by the smallest feature, divide each row by its sum (at least 1)");
  dgcn::cli::add_device(app, a.device,
                        "cpu, cuda (rank r of a node on cuda:r) or cuda:N (one rank per node on GPU N)");
  app.add_option("--backend", a.backend,
                 "Collective backend: gloo (CPU), nccl (CUDA) or auto (nccl for cuda)")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  app.add_option("--checkpoint", run.checkpoint_dir,
                 "Save a checkpoint into this folder after every epoch (rank 0; keeps the newest two and "
                 "best.pt, the best validation epoch's)");
  app.add_option(
         "--checkpoint-every-batches", run.checkpoint_every_batches,
         "Also save a checkpoint after every K batches of an epoch (written while training goes on); a "
         "resumed or restarted run continues with the next batch")
      ->check(kPositive);
  app.add_flag("--resume", run.resume,
               "Continue from the newest checkpoint in --checkpoint DIR (which must exist) up to --epochs");
  app.add_option("--seed", o.seed, "Seed of the weights, dropout and every epoch's shuffle and sampling");
  app.add_option("--threads", a.threads,
                 "Compute threads per rank (0: DGCN_NUM_THREADS, or this node's cores shared by its ranks)")
      ->check(kNonNegative);
  app.add_option("--workers", o.loader_workers, "Sampler threads working ahead of the trainer")
      ->check(kPositive);
  app.add_option("--prefetch", o.loader_queue, "Batches sampled ahead of the trainer")->check(kPositive);
  app.add_flag(
      "--gather-in-loader", a.gather_in_loader,
      "Have the sampler threads copy every batch's feature rows; by default on the CPU the first layer "
      "reads them from the graph store (the same model bit for bit, less work). For comparison runs");
  app.add_option("--eval", a.eval,
                 "full: layer-wise full-neighbour inference (exact); sampled: the sampled forward pass over "
                 "batches of evaluation nodes; none: no evaluation, for timing runs")
      ->check(CLI::IsMember({"full", "sampled", "none"}));
  dgcn::cli::add_fanouts(app, "--eval-num-neighbors", o.eval_fanouts,
                         "Fanouts of --eval sampled (unset: --num-neighbors)");
  app.add_option("--eval-batch-size", o.eval_batch_size, "Seeds per batch of --eval sampled")
      ->check(kPositive);
  app.add_option("--eval-every", o.eval_every, "Evaluate every N epochs; the last is always evaluated")
      ->check(kPositive);
  app.add_option(
      "--metrics-out", a.metrics_out,
      "Append one JSON line per epoch to FILE (flushed as each epoch ends; a resumed run keeps the "
      "lines up to its checkpoint)");
  app.add_option("--plot", a.plot, "Draw loss and metric curves into FILE.png or FILE.svg (gnuplot)");
  app.add_option("--cpu-cache-gb", a.cpu_cache_gb,
                 "Freed large CPU tensors kept for reuse, in GiB (Note [CPU memory reuse])")
      ->check(kNonNegative);
}

// What rank 0 checks before loading anything: every output can be written.
void check_outputs(const AppOptions& a, const dgcn::GcnRunOptions& run) {
  if (!a.metrics_out.empty()) dgcn::cli::check_output_file("--metrics-out", a.metrics_out);
  if (!a.plot.empty()) {
    dgcn::cli::check_output_file("--plot", a.plot);
    try {
      dgcn::check_plot_output(a.plot);
    } catch (const dgcn::Error& e) {
      throw dgcn::Error(std::string("--plot: ") + e.what());
    }
  }
  if (!run.checkpoint_dir.empty() && !run.resume)
    dgcn::cli::check_output_folder("--checkpoint", run.checkpoint_dir);
}

// "dgcn-train: data/small.gcn, 3-layer GCN [15,10,5] hidden 128, linear head": the plot's title.
std::string plot_title(const std::string& source, const dgcn::TrainOptions& o) {
  std::string fanouts;
  for (int64_t f : o.fanouts) fanouts += (fanouts.empty() ? "" : ",") + std::to_string(f);
  return fmt::format("dgcn-train: {}, {}-layer GCN [{}] hidden {}{}", source, o.fanouts.size(), fanouts,
                     o.hidden, o.linear_head ? ", linear head" : "");
}

int run_rank(const AppOptions& a, dgcn::TrainOptions o, const dgcn::GcnRunOptions& run_in,
             const dgcn::LaunchOptions& launch) {
  dgcn::GcnRunOptions run = run_in;
  const dgcn::RankEnv env = dgcn::rank_env_from_process();
  if (env.world_size > 1) spdlog::set_pattern(fmt::format("[%H:%M:%S.%e] [rank {}] [%^%l%$] %v", env.rank));
  const bool rank0 = env.rank == 0;
  dgcn::resume_after_restart(env, run.checkpoint_dir, run.resume);  // Note [Restarts]
  if (rank0) check_outputs(a, run);
  const auto start = std::chrono::steady_clock::now();
  dgcn::install_caching_cpu_allocator(static_cast<size_t>(a.cpu_cache_gb * (1 << 30)));
  int threads = a.threads;
  if (threads == 0) {
    // The local ranks share this node's cores.
    threads = std::getenv("DGCN_NUM_THREADS") != nullptr
                  ? dgcn::default_num_threads()
                  : std::max(1, dgcn::default_num_threads() / env.local_world_size);
  }
  at::set_num_threads(threads);
  o.compute_threads = threads;
  o.input_from_store = !a.gather_in_loader;
  o.linear_head = a.head == "linear";
  o.optimizer.kind = dgcn::parse_optimizer(a.optimizer);
  o.norm = dgcn::parse_gcn_norm(a.norm);
  o.eval_mode = a.eval == "full"      ? dgcn::EvalMode::kFullNeighbour
                : a.eval == "sampled" ? dgcn::EvalMode::kSampled
                                      : dgcn::EvalMode::kNone;
  const int gpu = dgcn::cli::device_index(a.device, env.local_rank);
  if (gpu >= 0) {
    DGCN_CHECK(a.device == "cuda" || env.local_world_size == 1,
               "--device {}: one GPU for {} ranks on this node; use --device cuda (rank r on cuda:r)",
               a.device, env.local_world_size);
    DGCN_CHECK(torch::cuda::is_available() && dgcn::spmm_has_cuda(),
               "--device {}: needs a GPU and a build against a CUDA LibTorch", a.device);
    o.device = c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(gpu));
  }
  dgcn::CommBackend backend;
  try {
    backend = dgcn::parse_backend(a.backend, o.device);
  } catch (const c10::Error& e) {
    throw dgcn::Error(fmt::format("--backend {}: {}", a.backend, e.what_without_backtrace()));
  }
  auto group = dgcn::ProcessGroup::create(env, {backend, launch.timeout});
  if (env.world_size > 1) spdlog::info("{} over {}", env.describe(), dgcn::backend_name(group->backend()));

  dgcn::GraphStore store;
  std::optional<dgcn::PartitionManifest> partition;
  const bool partitioned = !a.data.empty() && dgcn::is_partition_dir(a.data);
  DGCN_CHECK(a.seeds.empty() || partitioned,
             "--seeds {}: seeds are chosen per rank on a partitioned graph (--data DIR from dgcn-prep "
             "partition); {} "
             "is not one",
             a.seeds, a.data.empty() ? "the synthetic preset" : a.data);
  if (partitioned) {
    o.seeds = dgcn::parse_seed_mode(a.seeds.empty() ? "local" : a.seeds);
    dgcn::LoadOptions load;
    load.threads = threads;
    load.mode = a.load == "shared" ? dgcn::LoadMode::kSharedCache : dgcn::LoadMode::kPrivate;
    load.cache_dir = a.cache_dir;
    dgcn::PartitionedData data = dgcn::load_partition_part(a.data, *group, load);
    store = std::move(data.part);
    partition = std::move(data.manifest);
    run.data_path = a.data;
    run.partition = &*partition;
    spdlog::info("{}: part {} of {} ({} of {} nodes, {} CSR entries), seeds {}", a.data, store.part.index,
                 store.part.count, store.num_nodes(), store.part.num_global_nodes, store.num_edges(),
                 dgcn::seed_mode_name(o.seeds));
  } else if (a.data.empty()) {
    spdlog::info("no --data: generating the synthetic '{}' preset in memory", a.preset);
    store = dgcn::generate_synthetic(dgcn::synthetic_preset(a.preset), threads);
    run.data_path = "synthetic:" + a.preset;
  } else {
    dgcn::LoadOptions load;
    load.threads = threads;
    const bool shared = a.load == "shared" || (a.load == "auto" && env.local_world_size > 1);
    load.mode = shared ? dgcn::LoadMode::kSharedCache : dgcn::LoadMode::kPrivate;
    load.cache_dir = a.cache_dir;
    store = dgcn::load_store(a.data, load);
    run.data_path = a.data;
  }
  spdlog::info("{}: {} nodes, {} edges, {} features, {} classes ({}), train/valid/test {}/{}/{}",
               run.data_path, store.num_nodes(), store.num_edges(), store.num_features, store.num_classes,
               dgcn::task_name(store.task), store.train_nodes().size(), store.valid_nodes().size(),
               store.test_nodes().size());

  run.config = dgcn::gcn_run_config(o, store, run.data_path, group->size(), run.partition);
  const std::string metric = dgcn::metric_name(store.task);
  std::unique_ptr<dgcn::MetricsLog> metrics;
  std::vector<dgcn::CurvePoint> curve;
  const dgcn::GcnRunSummary summary =
      dgcn::train_gcn(store, o, run, *group, [&](const dgcn::EpochReport& r, const dgcn::Trainer& trainer) {
        if (!rank0) return;
        curve = trainer.curve();
        if (!a.metrics_out.empty() && !metrics) {
          // Opened at the first epoch this run trains: a resumed run keeps the lines before it.
          const int64_t before = r.epoch - 1;
          metrics = std::make_unique<dgcn::MetricsLog>(a.metrics_out, run.resume && before > 0 ? before : -1);
          metrics->write({{"config", run.config}, {"first_epoch", r.epoch}});
        }
        if (metrics) metrics->write(epoch_json(r, metric, env.world_size));
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
        if (r.partitioned) {
          spdlog::info(
              "epoch {:>3}  exchanged per batch: {:.2f} MB ({:.2f} ids, {:.2f} picks, {:.2f} rows), {:.3f} s",
              r.epoch, exchange_json(r, env.world_size)["per_batch"]["bytes"].get<double>() / 1e6,
              r.exchange.id_bytes / 1e6 / std::max<double>(1, r.batches * env.world_size),
              r.exchange.pick_bytes / 1e6 / std::max<double>(1, r.batches * env.world_size),
              r.exchange.feature_bytes / 1e6 / std::max<double>(1, r.batches * env.world_size),
              r.exchange.seconds / std::max<double>(1, r.batches * env.world_size));
        }
      });
  // What each rank held: the graph's arrays and its peak resident memory.
  std::vector<double> graph_bytes, peak_rss;
  for (const auto& rank_memory :
       dgcn::all_gather(*group, std::vector<double>{static_cast<double>(store.bytes()), peak_rss_bytes()})) {
    graph_bytes.push_back(rank_memory[0]);
    peak_rss.push_back(rank_memory[1]);
  }
  group->shutdown();
  if (!rank0) return 0;

  const dgcn::TrainSummary& s = summary.train;
  const bool evaluated_now = o.eval_mode != dgcn::EvalMode::kNone;
  const bool ever_evaluated = s.best_epoch >= 1;
  nlohmann::json out = {
      {"data", run.data_path},
      {"device", o.device.str()},
      {"world_size", summary.world_size},
      {"backend", dgcn::backend_name(group->backend())},
      {"first_epoch", summary.first_epoch},
      {"checkpoint_wait_s", summary.checkpoint_wait_s},
      {"epochs", s.epochs},
      {"valid_" + metric, evaluated_now ? nlohmann::json(s.valid_metric) : nlohmann::json()},
      {"test_" + metric, evaluated_now ? nlohmann::json(s.test_metric) : nlohmann::json()},
      {"best_valid_" + metric, ever_evaluated ? nlohmann::json(s.best_valid_metric) : nlohmann::json()},
      {"test_" + metric + "_at_best_valid",
       ever_evaluated ? nlohmann::json(s.test_at_best_valid) : nlohmann::json()},
      {"best_epoch", ever_evaluated ? nlohmann::json(s.best_epoch) : nlohmann::json()},
      {"train_s", s.train_s},
      {"eval_s", s.eval_s},
      {"total_s", dgcn::seconds_since(start)},
      {"param_digest", s.param_digest},
      {"memory", {{"graph_bytes", graph_bytes}, {"peak_rss_bytes", peak_rss}}},
      {"config", summary.config}};
  // The summary first: a plot that fails must not take the result with it.
  std::cout << out.dump() << std::endl;
  if (!a.plot.empty() && !curve.empty()) {
    dgcn::plot_training_curves(curve, metric, a.plot, plot_title(run.data_path, o));
    spdlog::info("wrote {}", a.plot);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  dgcn::reexec_with_passive_omp_waits(argv);  // Note [Passive OpenMP waits]
  AppOptions a;
  dgcn::TrainOptions o;
  dgcn::LaunchOptions launch;
  dgcn::GcnRunOptions run;
  CLI::App app{
      "dgcn-train: train a GCN on sampled mini-batches (neighbour sampling, SpMM layers) and evaluate it by "
      "layer-wise full-neighbour inference. Epochs count from 1. Prints one JSON summary on stdout (with the "
      "run's configuration); logs go to stderr."};
  dgcn::cli::setup(app, "dgcn-train");
  add_flags(app, a, o, run);
  dgcn::add_launch_flags(app, launch);
  if (auto code = dgcn::cli::parse(app, argc, argv)) return *code;
  // stdout carries the JSON result only; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn-train"));
  if (run.resume && run.checkpoint_dir.empty()) {
    std::cerr << "dgcn-train: --resume needs --checkpoint DIR (the folder to resume from)\n";
    return dgcn::cli::kUsageError;
  }
  if (run.checkpoint_every_batches > 0 && run.checkpoint_dir.empty()) {
    std::cerr << "dgcn-train: --checkpoint-every-batches needs --checkpoint DIR (the folder to write into)\n";
    return dgcn::cli::kUsageError;
  }
  try {
    if (auto code = dgcn::launch_if_requested(launch, argc, argv)) return *code;
    dgcn::remove_temporary_files_on_signals();  // a rank, not the launcher
    return run_rank(a, o, run, launch);
  } catch (const c10::Error& e) {
    std::cerr << "dgcn-train: " << e.what_without_backtrace() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "dgcn-train: " << e.what() << "\n";
  }
  return 1;
}
