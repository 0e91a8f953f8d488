// dgcn-sampler-bench: measures the neighbour sampler alone on a .gcn store
// (sampled edges/s and batches/s per thread count, the loader with feature
// gathering, and this machine's random-access limit). One JSON object on
// stdout, a table and progress on stderr. The work is in sampling/sampler_bench.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

#include "apps/cli/cli.h"
#include "base/error.h"
#include "bench/sampler_bench.h"
#include "graph/store_format.h"

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_st("dgcn-sampler-bench"));
  spdlog::set_pattern("[%T.%e] %v");

  CLI::App app{
      "dgcn-sampler-bench: how fast the neighbour sampler runs on a .gcn store, per thread count, against "
      "this machine's random-access limit. One JSON object on stdout, a table on stderr."};
  dgcn::cli::setup(app, "dgcn-sampler-bench");
  app.footer(dgcn::sampler_bench_columns());
  std::string data;
  dgcn::SamplerBenchOptions o;
  app.add_option("--data", data, "the .gcn store to sample from (seeds: its training nodes)")
      ->required()
      ->check(CLI::ExistingFile);
  dgcn::cli::add_fanouts(app, "--num-neighbors", o.fanouts,
                         "fanouts per layer, hop 0 first, comma separated; -1 takes all neighbours");
  app.add_option("--batch-size", o.batch_size, "seed nodes per batch")->check(dgcn::cli::kPositive);
  dgcn::cli::add_list(app, "--threads", o.threads,
                      "thread counts to measure, comma separated; each runs that many loader workers, and as "
                      "many threads inside one batch for the intra-batch figure",
                      1);
  app.add_option("--batches", o.batches, "measured batches per run (after a warm-up)")
      ->check(dgcn::cli::kPositive);
  app.add_option("--seed", o.seed, "random seed of the shuffle and the sampling");
  app.add_option("--queue-depth", o.queue_depth, "batches the loader samples ahead")
      ->check(dgcn::cli::kPositive);
  app.add_flag("--replace", o.replace, "sample with replacement");
  bool no_gather = false;
  app.add_flag("--no-gather", no_gather, "skip the run that gathers features and labels");
  app.add_option("--limit-seconds", o.limit_seconds, "seconds per random-access-limit measurement")
      ->check(dgcn::cli::kPositive);

  if (auto code = dgcn::cli::parse(app, argc, argv)) return *code;
  o.gather = !no_gather;
  return dgcn::cli::run_main("dgcn-sampler-bench", [&] {
    spdlog::info("loading {}", data);
    dgcn::LoadStats load_stats;
    dgcn::GraphStore store = dgcn::load_store(data, {}, &load_stats);
    spdlog::info("loaded {} nodes, {} CSR entries in {:.1f} s", store.num_nodes(), store.num_edges(),
                 load_stats.seconds);
    nlohmann::json result = dgcn::run_sampler_bench(store, o, data);
    std::cerr << dgcn::sampler_bench_table(result);
    std::cout << result.dump() << std::endl;
    return 0;
  });
}
