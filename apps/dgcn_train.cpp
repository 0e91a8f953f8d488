// dgcn-train: the command line of the training front door
// (train/train_job.h), on one process or N ranks:
// --nproc-per-node N starts the local ranks (distributed/launcher.h), or
// torchrun / an srun wrapper sets RANK and friends. Rank 0 appends one JSON
// line per epoch to --metrics-out (train/metrics_log.h), prints the JSON
// summary on stdout, then draws the plot; progress goes to stderr.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "apps/cli/cli.h"
#include "apps/cli/omp_waits.h"
#include "apps/cli/process_settings.h"
#include "apps/cli/torch_cli.h"
#include "base/atomic_file.h"
#include "base/parallel.h"
#include "distributed/launcher.h"
#include "distributed/process_group.h"
#include "partition/partition_files.h"
#include "train/checkpoint.h"
#include "train/train_job.h"
#include "train/training_plot.h"

namespace {

// The flags kept as typed; run_rank turns them into the job's options.
struct AppOptions {
  std::string model = "gcn";
  std::string head = "none";
  std::string norm = "full";
  std::string device = "cpu";
  std::string eval = "full";
  std::string backend = "auto";
  std::string load = "auto";
  std::string optimizer = "adam";
  std::string seeds;  // "" = the default: local on a partitioned graph
  std::string precision = "fp32";
  int threads = 0;
  bool gather_in_loader = false;
  bool overwrite_checkpoints = false;
  double cpu_cache_gb = 4;
};

void add_flags(CLI::App& app, AppOptions& a, dgcn::TrainJobOptions& job) {
  dgcn::TrainOptions& o = job.train;
  using dgcn::cli::kNonNegative;
  using dgcn::cli::kPositive;
  CLI::Option* data = app.add_option(
      "--data", job.data.path,
      "Graph store (.gcn, from dgcn-prep) to train on, or a partitioned graph's folder (from dgcn-prep "
      "partition: one rank per part, each loading only its part); without it the synthetic --preset is "
      "generated in memory");
  // A missing path is a usage error naming the flag (exit 2), as dgcn-prep's --file.
  data->check(CLI::ExistingPath);
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
  app.add_option("--cache-dir", job.data.cache_dir,
                 "Where --load shared keeps the decompressed cache (empty: next to "
                 "--data)");
  app.add_option("--preset", job.data.preset, "Synthetic preset generated in memory when --data is absent")
      ->check(CLI::IsMember({"tiny", "small", "products"}))
      ->excludes(data);
  app.add_option("--model", a.model,
                 "gcn: Kipf & Welling's GCN (normalized sums, --norm); sage: GraphSAGE, the mean of the "
                 "sampled neighbours through one weight and the node itself through another (PyG's "
                 "SAGEConv); gat: graph attention, --heads heads of --hidden features per hidden layer, "
                 "concatenated, softmax over each node's neighbours and itself, ELU, one head for the "
                 "classes (PyG's GATConv; the paper's Cora setup is --heads 8 --hidden 8). The checkpoint "
                 "records it; --resume and dgcn-predict rebuild the same model")
      ->check(CLI::IsMember({"gcn", "sage", "gat"}));
  app.add_option("--heads", o.heads,
                 "--model gat: attention heads of every hidden layer (--hidden counts features per head, "
                 "as PyG's GATConv(out_channels, heads))")
      ->check(kPositive);
  app.add_option("--attention-dropout", o.attention_dropout,
                 "--model gat: dropout on the attention coefficients in training (the paper: 0.6)")
      ->check(CLI::Range(0.0, 0.99));
  dgcn::cli::add_fanouts(app, "--num-neighbors", o.fanouts,
                         "Fanouts, one per layer, hop 0 first; -1 takes every neighbour, 0 none");
  app.add_option("--batch-size", o.batch_size, "Seed nodes per mini-batch and rank (at most 2^30)")
      ->check(kPositive)
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_option("--max-batches", o.max_batches,
                 "Train only the first N batches of every epoch (timing runs; 0: "
                 "all)")
      ->check(kNonNegative);
  app.add_option("--hidden", o.hidden, "Hidden features of every layer (GAT: per head)")->check(kPositive);
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
  app.add_option("--precision", a.precision,
                 "fp32, or bf16: features, activations and matrix products in bfloat16, sums, weights, "
                 "optimizer and loss in fp32 (fast on CPUs with AVX512-BF16/AMX; --version says); a "
                 "checkpoint resumes only in its own precision")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  dgcn::cli::add_device(app, a.device,
                        "cpu, cuda (rank r of a node on cuda:r) or cuda:N (one rank per node on GPU N)");
  app.add_option("--backend", a.backend,
                 "Collective backend: gloo (CPU), nccl (CUDA) or auto (nccl for cuda)")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  app.add_option("--checkpoint", job.checkpoint_dir,
                 "Save a checkpoint into this folder after every epoch (rank 0; keeps the newest two and "
                 "best.pt, the best validation epoch's)");
  app.add_option(
         "--checkpoint-every-batches", job.checkpoint_every_batches,
         "Also save a checkpoint after every K batches of an epoch (written while training goes on); a "
         "resumed or restarted run continues with the next batch")
      ->check(kPositive);
  app.add_flag(
      "--overwrite-checkpoints", a.overwrite_checkpoints,
      "A fresh run into a --checkpoint folder that holds another run's checkpoints removes them first "
      "(without it, such a folder is refused)");
  app.add_flag("--resume", job.resume,
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
      "--metrics-out", job.metrics_out,
      "Write one JSON line per epoch to FILE (flushed as each epoch ends). A fresh run refuses a FILE "
      "that holds lines (another run's; nothing is replaced); a resumed run keeps the lines up to its "
      "checkpoint and appends");
  app.add_option("--plot", job.plot, "Draw loss and metric curves into FILE.png or FILE.svg (gnuplot)");
  app.add_option(
         "--start-gate", job.start_gate,
         "Timing runs of programs started together: once built, wait before the first epoch until FILE "
         "exists, having created FILE.ready.<pid> (train/start_gate.h; bench/python_epoch_bench.py "
         "--side-by-side opens the gate when every rank of both programs waits)")
      ->type_name("FILE");
  app.add_option("--cpu-cache-gb", a.cpu_cache_gb,
                 "Freed large CPU tensors kept for reuse, in GiB (Note [CPU memory reuse])")
      ->check(kNonNegative);
}

// Flags a model does not have are refused (exit 2), not ignored.
void check_model_flags(const CLI::App& app, const AppOptions& a) {
  const auto refuse = [&](const char* flag, const char* whose) {
    throw dgcn::cli::UsageError(
        fmt::format("{} is a {} setting; --model {} does not have it", flag, whose, a.model));
  };
  if (a.model != "gat" && app.count("--heads") > 0) refuse("--heads", "GAT (--model gat)");
  if (a.model != "gat" && app.count("--attention-dropout") > 0)
    refuse("--attention-dropout", "GAT (--model gat)");
  if (a.model != "gcn" && app.count("--norm") > 0) refuse("--norm", "GCN (--model gcn)");
}

// A fresh run never replaces another run's metrics, as it never mixes its
// checkpoints with another run's (a restarted run's own lines are not another
// run's: rank_env's restart_count).
void refuse_used_metrics_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) == 0) return;
  std::ifstream in(path);
  const auto lines = std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  throw dgcn::cli::UsageError(fmt::format(
      "--metrics-out {} already holds {} lines of another run; a fresh run does not replace them (choose "
      "another file or remove it; add --resume with that run's --checkpoint to continue it)",
      path, lines));
}

// What rank 0 checks before loading anything: every output can be written.
void check_outputs(const dgcn::TrainJobOptions& job, bool overwrite, bool restarted) {
  if (!job.metrics_out.empty()) {
    dgcn::cli::check_output_file("--metrics-out", job.metrics_out);
    if (!job.resume && !restarted) refuse_used_metrics_file(job.metrics_out);
  }
  if (!job.plot.empty()) {
    dgcn::cli::check_output_file("--plot", job.plot);
    try {
      dgcn::check_plot_output(job.plot);
    } catch (const dgcn::Error& e) {
      throw dgcn::cli::UsageError(std::string("--plot: ") + e.what());
    }
  }
  // Every rank creates FILE.ready.<pid> beside the gate.
  if (!job.start_gate.empty()) dgcn::cli::check_output_file("--start-gate", job.start_gate);
  if (job.checkpoint_dir.empty() || job.resume) return;
  dgcn::cli::check_output_folder("--checkpoint", job.checkpoint_dir);
  // A fresh run never mixes its checkpoints with another run's.
  const std::vector<std::string> old = dgcn::checkpoint_files(job.checkpoint_dir);
  if (old.empty()) return;
  if (!overwrite) {
    throw dgcn::cli::UsageError(fmt::format(
        "--checkpoint {} holds another run's checkpoints ({} files, newest {}) (add --resume to continue "
        "that run, "
        "choose another folder, or add --overwrite-checkpoints to replace them)",
        job.checkpoint_dir, old.size(), dgcn::newest_checkpoint(job.checkpoint_dir).value_or(old.back())));
  }
  spdlog::warn("--overwrite-checkpoints: removing the {} checkpoint files of the run in {}", old.size(),
               job.checkpoint_dir);
  dgcn::remove_checkpoints(job.checkpoint_dir);
}

// Rank 0's line on Ctrl-C (SIGINT/SIGTERM): the last good checkpoint and the
// command that resumes from it (this command with --resume).
void set_interrupt_note(const dgcn::TrainJobOptions& job, const std::vector<std::string>& args) {
  if (job.checkpoint_dir.empty()) {
    dgcn::set_interrupt_note("dgcn-train: interrupted; without --checkpoint there is nothing to resume from",
                             "", "\n");
    return;
  }
  std::string command;
  for (const std::string& arg : args) {
    if (arg == "--resume") continue;
    const bool plain = arg.find_first_of(" '\"$\\") == std::string::npos && !arg.empty();
    command += (command.empty() ? "" : " ") + (plain ? arg : "'" + arg + "'");
  }
  dgcn::set_interrupt_note("dgcn-train: interrupted; the last good checkpoint is ",
                           "none yet (no epoch had ended)", "; resume with: " + command + " --resume\n");
  if (job.resume) {
    if (auto newest = dgcn::newest_checkpoint(job.checkpoint_dir)) dgcn::set_interrupt_checkpoint(*newest);
  }
}

int run_rank(const AppOptions& a, dgcn::TrainJobOptions job, const dgcn::LaunchOptions& launch,
             const std::vector<std::string>& args) {
  const dgcn::RankEnv env = dgcn::rank_env_from_process();
  if (env.world_size > 1) spdlog::set_pattern(fmt::format("[%H:%M:%S.%e] [rank {}] [%^%l%$] %v", env.rank));
  dgcn::resume_after_restart(env, job.checkpoint_dir, job.resume);  // Note [Restarts]
  if (env.rank == 0) {
    check_outputs(job, a.overwrite_checkpoints, env.restart_count > 0);
    set_interrupt_note(job, args);
  }
  const int threads = dgcn::resolve_threads(a.threads, env.local_world_size);
  dgcn::cli::apply_process_settings(
      {.threads = threads, .cpu_cache_bytes = static_cast<size_t>(a.cpu_cache_gb * (1 << 30))});
  dgcn::TrainOptions& o = job.train;
  o.compute_threads = threads;
  o.input_from_store = !a.gather_in_loader;
  o.model = dgcn::parse_model_kind(a.model);
  o.linear_head = a.head == "linear";
  o.optimizer.kind = dgcn::parse_optimizer(a.optimizer);
  o.norm = dgcn::parse_gcn_norm(a.norm);
  o.precision = dgcn::parse_precision(a.precision);
  o.eval_mode = a.eval == "full"      ? dgcn::EvalMode::kFullNeighbour
                : a.eval == "sampled" ? dgcn::EvalMode::kSampled
                                      : dgcn::EvalMode::kNone;
  o.device = dgcn::cli::device_for_rank(a.device, env);
  job.data.load = dgcn::parse_load_policy(a.load);
  job.local_world_size = env.local_world_size;
  if (!a.seeds.empty()) {
    const std::string misfit = dgcn::seed_mode_misfit(job.data.path);
    if (!misfit.empty()) throw dgcn::cli::UsageError(fmt::format("--seeds {}: {}", a.seeds, misfit));
    job.seeds = dgcn::parse_seed_mode(a.seeds);
  }
  auto group =
      dgcn::ProcessGroup::create(env, {dgcn::cli::backend_flag(a.backend, o.device), launch.timeout});
  if (env.world_size > 1) spdlog::info("{} over {}", env.describe(), dgcn::backend_name(group->backend()));
  // The summary first: a plot that fails must not take the result with it.
  dgcn::run_train_job(job, *group,
                      [](const nlohmann::json& summary) { std::cout << summary.dump() << std::endl; });
  group->shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  dgcn::cli::reexec_with_training_environment(argv);  // apps/cli/omp_waits.h
  AppOptions a;
  dgcn::TrainJobOptions job;
  dgcn::LaunchOptions launch;
  CLI::App app{
      "dgcn-train: train a GNN (--model gcn, sage or gat) on sampled mini-batches (neighbour sampling, SpMM "
      "layers) and evaluate it by "
      "layer-wise full-neighbour inference. Epochs count from 1. Prints one JSON summary on stdout (with the "
      "run's configuration); logs go to stderr."};
  dgcn::cli::setup(app, "dgcn-train");
  add_flags(app, a, job);
  dgcn::add_launch_flags(app, launch);
  if (auto code = dgcn::cli::parse(app, argc, argv)) return *code;
  // stdout carries the JSON result only; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn-train"));
  return dgcn::cli::run_main(
      "dgcn-train",
      [&] {
        check_model_flags(app, a);
        if (job.resume && job.checkpoint_dir.empty())
          throw dgcn::cli::UsageError("--resume needs --checkpoint DIR (the folder to resume from)");
        if (job.checkpoint_every_batches > 0 && job.checkpoint_dir.empty())
          throw dgcn::cli::UsageError(
              "--checkpoint-every-batches needs --checkpoint DIR (the folder to write into)");
        if (auto code = dgcn::launch_if_requested(launch, argc, argv)) return *code;
        dgcn::remove_temporary_files_on_signals();  // a rank, not the launcher
        return run_rank(a, job, launch, std::vector<std::string>(argv, argv + argc));
      },
      dgcn::cli::torch_message);
}
