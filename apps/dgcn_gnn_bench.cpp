// dgcn-gnn-bench: our SAGEConv and GATConv layers and the GAT kernels on a
// products-like sampled batch, forward + backward (bench/gnn_bench.h).
// Prints one JSON object on stdout; progress on stderr.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/cli/cli.h"
#include "bench/gnn_bench.h"
#include "bench/products_batch_cli.h"

int main(int argc, char** argv) {
  dgcn::GnnBenchOptions o;
  CLI::App app{
      "dgcn-gnn-bench: SAGEConv and GATConv forward + backward per products-like sampled batch. One JSON "
      "object on stdout."};
  dgcn::cli::setup(app, "dgcn-gnn-bench");
  dgcn::add_products_batch_shape(app, o.batch);
  app.add_option("--batch-size", o.batch.seeds, "Seed nodes of the modelled batch")
      ->check(dgcn::cli::kPositive);
  app.add_option("--features", o.features, "Input features")->check(dgcn::cli::kPositive);
  app.add_option("--sage-hidden", o.sage_hidden, "SAGE hidden width")->check(dgcn::cli::kPositive);
  app.add_option("--heads", o.gat_heads, "GAT heads")->check(dgcn::cli::kPositive);
  app.add_option("--gat-hidden", o.gat_hidden, "GAT features per head")->check(dgcn::cli::kPositive);
  app.add_option("--classes", o.classes, "Output width")->check(dgcn::cli::kPositive);
  app.add_option("--threads", o.threads, "Threads (0: all cores)")->check(dgcn::cli::kNonNegative);
  app.add_option("--reps", o.reps, "Timed repetitions (after one warm-up)")->check(dgcn::cli::kPositive);
  dgcn::cli::add_device(app, o.device, "cpu, cuda or cuda:N");
  app.add_option("--seed", o.batch.seed, "Seed of the synthetic batch");
  if (auto code = dgcn::cli::parse(app, argc, argv)) return *code;
  spdlog::set_default_logger(spdlog::stderr_color_mt("dgcn-gnn-bench"));
  return dgcn::cli::run_main("dgcn-gnn-bench", [&] {
    dgcn::start_products_bench(o.batch);
    std::cout << dgcn::run_gnn_bench(o).dump() << std::endl;
    return 0;
  });
}
