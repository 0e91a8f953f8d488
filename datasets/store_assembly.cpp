#include "datasets/store_assembly.h"

#include <algorithm>
#include <string>

#include "base/error.h"
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

std::string label_problem(int64_t value, int64_t num_classes) {
  if (value < -1 || value >= INT32_MAX)
    return "not a class id (a non-negative integer, or -1 for unlabelled)";
  if (num_classes > 0 && value >= num_classes) return "not below num_classes " + std::to_string(num_classes);
  return "";
}

void set_single_labels(GraphStore& store, std::vector<int32_t>&& labels, int64_t num_classes,
                       const std::string& what) {
  int64_t max_label = -1;
  for (size_t v = 0; v < labels.size(); ++v) {
    const std::string problem = label_problem(labels[v], num_classes);
    DGCN_CHECK(problem.empty(), "{}: node {}'s label {} is {}", what, v, labels[v], problem);
    max_label = std::max<int64_t>(max_label, labels[v]);
  }
  DGCN_CHECK(max_label >= 0, "{}: no node has a label", what);
  store.task = Task::kSingleLabel;
  store.num_classes = num_classes > 0 ? num_classes : max_label + 1;
  store.labels = Buffer::from_vector(std::move(labels));
}

void set_splits(GraphStore& store, Splits&& splits) {
  store.train = Buffer::from_vector(std::move(splits.train));
  store.valid = Buffer::from_vector(std::move(splits.valid));
  store.test = Buffer::from_vector(std::move(splits.test));
}

}  // namespace dgcn
