// The flags and set-up that the mains of the benchmarks over a products-like
// batch (bench/products_batch.h: dgcn-spmm-bench, dgcn-gnn-bench) share, so
// the batch's shape reads and is checked the same in each. Header-only: the
// mains link dgcn_cli, bench's libraries do not.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "apps/cli/cli.h"
#include "bench/products_batch.h"
#include "models/cpu_allocator.h"

namespace dgcn {

// --num-neighbors and --new-fraction: the modelled batch's hops.
inline void add_products_batch_shape(CLI::App& app, ProductsBatchSpec& spec) {
  cli::add_fanouts(app, "--num-neighbors", spec.fanouts, "Fanouts of the modelled batch, hop 0 first");
  cli::add_list(app, "--new-fraction", spec.new_fraction,
                "Per hop, the chance a sampled neighbour is a node not seen before, comma separated", 0.0);
}

// Inside run_main, before measuring. Throws cli::UsageError unless
// --new-fraction has one value per fanout: products_batch repeats the last
// value for further hops, which on the command line would hide a typo. Then
// installs the caching CPU allocator (4 GiB cap, Note [CPU memory reuse]),
// as dgcn-train runs, so the timings see the allocator training sees.
inline void start_products_bench(const ProductsBatchSpec& spec) {
  if (spec.new_fraction.size() != spec.fanouts.size()) {
    throw cli::UsageError(fmt::format("--new-fraction needs one value per fanout of --num-neighbors ({})",
                                      spec.fanouts.size()));
  }
  install_caching_cpu_allocator(size_t{4} << 30);
}

}  // namespace dgcn
