// dgcn-ddp-bench: what gradient sync costs (bench/ddp_bench.h). Rank 0
// prints one JSON object on stdout.
//
//   dgcn-ddp-bench --nproc-per-node 2 --width 2048 --layers 6
//   dgcn-ddp-bench --nproc-per-node 2 --model gcn --batch-size 1024
#include <c10/util/Exception.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/cli/cli.h"
#include "apps/cli/torch_cli.h"
#include "bench/ddp_bench.h"
#include "distributed/launcher.h"
#include "distributed/rank_env.h"

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn"));
  CLI::App app{
      "dgcn-ddp-bench: step time with and without gradient sync, and all-reduce throughput, on a wide "
      "MLP or the classic GCN. Rank 0 prints one JSON object."};
  dgcn::cli::setup(app, "dgcn-ddp-bench");
  dgcn::LaunchOptions launch;
  dgcn::DdpBenchOptions o;
  app.add_option("--model", o.model,
                 "mlp: a stack of wide Linear layers; gcn: the classic GCN on a products-like sampled batch")
      ->check(CLI::IsMember({"mlp", "gcn"}));
  app.add_option("--width", o.width, "Width of each Linear layer")->check(dgcn::cli::kPositive);
  app.add_option("--layers", o.layers, "Number of Linear layers (6: ~25M parameters)")
      ->check(dgcn::cli::kPositive);
  app.add_option("--rows", o.batch, "MLP rows per rank per step")->check(dgcn::cli::kPositive);
  app.add_option("--features", o.features, "GCN input features")->check(dgcn::cli::kPositive);
  app.add_option("--hidden", o.hidden, "GCN hidden features")->check(dgcn::cli::kPositive);
  app.add_option("--classes", o.classes, "GCN classes")->check(dgcn::cli::kPositive);
  dgcn::cli::add_fanouts(app, "--num-neighbors", o.fanouts, "GCN fanouts, one per layer, hop 0 first");
  app.add_option("--batch-size", o.seeds, "GCN seed nodes per rank per step (dgcn-train's --batch-size)")
      ->check(dgcn::cli::kPositive);
  app.add_option("--steps", o.steps, "Timed steps per mode")->check(dgcn::cli::kPositive);
  app.add_option("--warmup", o.warmup, "Untimed steps before each mode")->check(dgcn::cli::kNonNegative);
  dgcn::add_launch_flags(app, launch);
  if (auto code = dgcn::cli::parse(app, argc, argv)) return *code;
  return dgcn::cli::run_main(
      "dgcn-ddp-bench",
      [&] {
        if (auto code = dgcn::launch_if_requested(launch, argc, argv)) return *code;
        const dgcn::RankEnv env = dgcn::rank_env_from_process();
        const nlohmann::json result = dgcn::run_ddp_bench(env, launch.timeout, o);
        if (env.rank == 0) std::cout << result.dump() << std::endl;
        return 0;
      },
      dgcn::cli::torch_message);
}
