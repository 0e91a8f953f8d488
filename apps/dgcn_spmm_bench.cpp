// dgcn-spmm-bench: the SpMM kernel on a products-like sampled block against
// this machine's memory bandwidth (bench/spmm_bench.h). Prints one JSON
// object on stdout; progress on stderr.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/cli/cli.h"
#include "bench/products_batch_cli.h"
#include "bench/spmm_bench.h"

int main(int argc, char** argv) {
  dgcn::SpmmBenchOptions o;
  CLI::App app{
      "dgcn-spmm-bench: SpMM on a products-like sampled block vs this machine's memory bandwidth. One JSON "
      "object on stdout."};
  dgcn::cli::setup(app, "dgcn-spmm-bench");
  dgcn::add_products_batch_shape(app, o.batch);
  app.add_option("--batch-size", o.batch.seeds,
                 "Seed nodes of the modelled batch (dgcn-train's --batch-size)")
      ->check(dgcn::cli::kPositive);
  app.add_option("--features", o.features, "Width of x: features aggregated per entry")
      ->check(dgcn::cli::kPositive);
  app.add_option("--out-features", o.out_features, "Output width of the dense transform measured")
      ->check(dgcn::cli::kPositive);
  app.add_option("--classes", o.classes, "Classes of the model of the training-step measurement")
      ->check(dgcn::cli::kPositive);
  app.add_option("--threads", o.threads, "Threads (0: all cores)")->check(dgcn::cli::kNonNegative);
  app.add_option("--reps", o.reps, "Repetitions; the best time counts")->check(dgcn::cli::kPositive);
  app.add_option("--stream-mb", o.stream_mb, "Size of each STREAM array in MiB")->check(dgcn::cli::kPositive);
  dgcn::cli::add_device(app, o.device, "cpu, cuda or cuda:N");
  app.add_option("--seed", o.batch.seed, "Seed of the synthetic block");
  if (auto code = dgcn::cli::parse(app, argc, argv)) return *code;
  // stdout carries the JSON result only; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn-spmm-bench"));
  return dgcn::cli::run_main("dgcn-spmm-bench", [&] {
    dgcn::start_products_bench(o.batch);
    const nlohmann::json out = dgcn::run_spmm_bench(o);
    std::cout << out.dump() << std::endl;
    return 0;
  });
}
