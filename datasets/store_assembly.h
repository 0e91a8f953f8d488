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

// Single-label classes, one rule for every reader (npz, OGB, GraphSAINT) and
// the Python package's from_pyg: a node's label is a class id below
// num_classes (when > 0) and 2^31 - 1, or -1 for an unlabelled node. Any
// other negative value is refused rather than taken as unlabelled (in a
// file, -2 is more likely damage than intent). label_problem says what is
// wrong with `value` ("" for a label), for the reader to name where it is.
std::string label_problem(int64_t value, int64_t num_classes);

// store.task = kSingleLabel, store.labels = labels, store.num_classes =
// num_classes when > 0, else the largest label + 1. Throws dgcn::Error
// naming `what` and the node when a label breaks the rule, or when no node
// has a label.
void set_single_labels(GraphStore& store, std::vector<int32_t>&& labels, int64_t num_classes,
                       const std::string& what);

}  // namespace dgcn
