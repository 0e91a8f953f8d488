#include "datasets/store_assembly.h"

#include "base/parallel.h"

namespace dgcn {

nlohmann::json set_graph(GraphStore& store, int64_t num_nodes, std::vector<int64_t>&& src,
                         std::vector<int64_t>&& dst, const EdgeOptions& options, int num_threads,
                         const std::string& what) {
  EdgeStats stats;
  {
    std::vector<int64_t> s = std::move(src), d = std::move(dst);
    // Row v lists the nodes v aggregates from. Directed: its in-neighbours,
    // the sources of edges u -> v (PyG's flow source_to_target); symmetrized
    // graphs are the same either way.
    store.graph = options.symmetrize ? build_csr(num_nodes, s, d, options, num_threads, what, &stats)
                                     : build_csr(num_nodes, d, s, options, num_threads, what, &stats);
  }
  store.degree = degrees_of(store.graph, num_threads);
  return {{"symmetrize", options.symmetrize},
          {"drop_self_loops", options.drop_self_loops},
          {"drop_duplicates", options.drop_duplicates},
          {"input_edges", stats.input_edges},
          {"self_loops_dropped", stats.self_loops_dropped},
          {"duplicates_dropped", stats.duplicates_dropped},
          {"csr_entries", stats.output_entries}};
}

void set_splits(GraphStore& store, Splits&& splits) {
  store.train = Buffer::from_vector(std::move(splits.train));
  store.valid = Buffer::from_vector(std::move(splits.valid));
  store.test = Buffer::from_vector(std::move(splits.test));
}

}  // namespace dgcn
