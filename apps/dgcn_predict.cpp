// dgcn-predict: predictions and embeddings of a trained checkpoint as .npy
// files (train/predict.h), on 1..N ranks like dgcn-train. The checkpoint says
// what the model is; no model flags. One JSON summary on stdout.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
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
#include "train/open_data.h"
#include "train/predict.h"

int main(int argc, char** argv) {
  dgcn::cli::reexec_with_training_environment(argv);  // apps/cli/omp_waits.h
  CLI::App app{
      "dgcn-predict: predictions and embeddings of a trained checkpoint (GCN, GraphSAGE or GAT: the model "
      "its record names) by layer-wise full-neighbour "
      "inference (the same code as dgcn-train's evaluation), as .npy files numpy reads: PREFIX.node_ids.npy "
      "(int64, the source dataset's ids), PREFIX.class.npy (int64), PREFIX.probs.npy / PREFIX.logits.npy "
      "(float32, N x classes; sigmoid for multi-label), PREFIX.embeddings.npy (float32). The checkpoint "
      "records the model, so there are no model flags. One JSON summary on stdout."};
  dgcn::cli::setup(app, "dgcn-predict");
  dgcn::PredictOptions o;
  std::string data, device = "cpu", backend = "auto", what = "class,probs", precision;
  int threads = 0;
  dgcn::LaunchOptions launch;
  app.add_option("--checkpoint", o.checkpoint,
                 "A checkpoint file, or dgcn-train's --checkpoint folder (its best.pt, else its newest)")
      ->required();
  app.add_option(
         "--data", data,
         "The graph store (.gcn) to predict on, or a partitioned graph's folder (the whole store it was "
         "made from is read)")
      ->required();
  app.add_option("--out", o.out, "PREFIX of the files written (PREFIX.class.npy, ...)")->required();
  app.add_option("--nodes", o.nodes,
                 "Which nodes: all, train, valid, test, or FILE.npy holding source-dataset node ids")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "all" || v == "train" || v == "valid" || v == "test" || v.ends_with(".npy")) return "";
            return "'" + v + "' is not a node set; choose all, train, valid, test or FILE.npy of source ids";
          },
          "all|train|valid|test|FILE.npy"));
  app.add_option("--what", what, "Comma-separated outputs: class, probs, logits, embeddings");
  app.add_option("--layer", o.layer,
                 "Embeddings: the number of the layer whose output they are (1 = the first; 0: the last "
                 "before the classifier)")
      ->check(dgcn::cli::kNonNegative);
  app.add_option("--precision", precision,
                 "fp32 or bf16 inference (unset: the precision the checkpoint was trained in)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  dgcn::cli::add_device(app, device, "cpu, cuda (rank r of a node on cuda:r) or cuda:N");
  app.add_option("--backend", backend, "Collective backend: gloo (CPU), nccl (CUDA) or auto")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  app.add_option("--threads", threads, "Compute threads per rank (0: this node's cores shared by its ranks)")
      ->check(dgcn::cli::kNonNegative);
  dgcn::add_launch_flags(app, launch);
  if (auto code = dgcn::cli::parse(app, argc, argv)) return *code;
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn-predict"));
  if (!precision.empty()) o.precision = dgcn::parse_precision(precision);
  o.what.clear();
  for (size_t b = 0;;) {
    const size_t e = std::min(what.find(',', b), what.size());
    o.what.push_back(what.substr(b, e - b));
    if (e == what.size()) break;
    b = e + 1;
  }
  return dgcn::cli::run_main(
      "dgcn-predict",
      [&] {
        for (const std::string& w : o.what) {
          if (w != "class" && w != "probs" && w != "logits" && w != "embeddings") {
            throw dgcn::cli::UsageError(fmt::format(
                "--what: '{}' is not an output; choose from class, probs, logits, embeddings", w));
          }
        }
        if (auto code = dgcn::launch_if_requested(launch, argc, argv)) return *code;
        dgcn::remove_temporary_files_on_signals();
        const dgcn::RankEnv env = dgcn::rank_env_from_process();
        if (env.world_size > 1)
          spdlog::set_pattern(fmt::format("[%H:%M:%S.%e] [rank {}] [%^%l%$] %v", env.rank));
        if (env.rank == 0) dgcn::cli::check_output_file("--out", o.out + ".node_ids.npy");
        threads = dgcn::resolve_threads(threads, env.local_world_size);
        dgcn::cli::apply_process_settings({.threads = threads});
        o.device = dgcn::cli::device_for_rank(device, env);
        auto group =
            dgcn::ProcessGroup::create(env, {dgcn::cli::backend_flag(backend, o.device), launch.timeout});
        dgcn::DataSource source;
        source.path = data;
        source.load = dgcn::LoadPolicy::kPrivate;
        const dgcn::OpenedData opened =
            dgcn::open_data(source, *group, {.threads = threads, .use = dgcn::DataUse::kWholeGraph});
        const nlohmann::json summary = dgcn::predict(opened.store, o, *group, threads);
        group->shutdown();
        if (env.rank == 0) std::cout << summary.dump() << std::endl;
        return 0;
      },
      dgcn::cli::torch_message);
}
