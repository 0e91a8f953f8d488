// Steps every reader ends with: the CSR and degrees from an edge list under
// the user's EdgeOptions, the splits, and the provenance metadata.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/splits.h"
#include "graph/csr_builder.h"
#include "graph/graph_store.h"

namespace dgcn {

// Builds store.graph and store.degree from src[i] -> dst[i] (the vectors are
// released once the CSR is built; without symmetrize, row v holds v's
// in-neighbours: a directed edge u -> v puts u in v's row) and returns what happened as JSON
// ({"input_edges", "self_loops_dropped", "duplicates_dropped", "symmetrize", ...}).
nlohmann::json set_graph(GraphStore& store, int64_t num_nodes, std::vector<int64_t>&& src,
                         std::vector<int64_t>&& dst, const EdgeOptions& options, int num_threads,
                         const std::string& what);

void set_splits(GraphStore& store, Splits&& splits);

}  // namespace dgcn
