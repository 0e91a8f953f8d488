// Layer-wise full-neighbour inference: the exact output of a model
// (models/gnn.h: GCN, GraphSAGE, GAT; no sampling)
// for a set of nodes, computed one layer at a time over the whole graph
// rather than one k-hop subgraph per node (whose sizes explode with k).
//
// Layer L-1 is needed at the target nodes, layer L-2 at those nodes and
// their neighbours, and so on down to layer 0. Each layer is evaluated for
// its needed rows in chunks (bounded memory), reading the previous layer's
// output for the rows it needs. For GCN the aggregation order is chosen
// once per layer over all its rows (Note [Aggregation order]):
// transform-first multiplies every input row by W once and then aggregates
// chunk by chunk. Other models run their layer on each chunk as on a
// sampled block (models/gnn.h chunk_block: the chunk's rows first, then the
// neighbours they read).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <span>

#include "graph/graph_store.h"
#include "models/gnn.h"
#include "partition/collectives.h"
#include "partition/part_map.h"

namespace dgcn {

struct InferenceOptions {
  int64_t chunk_rows = 1 << 16;  // rows of a layer computed at a time
  c10::Device device = c10::Device(c10::DeviceType::CPU);
};

// Logits [nodes.size() x classes] of `nodes` (any order, repeats allowed)
// with every neighbour of every node (for GCN, GcnNorm::kFullGraph without
// sampling). `features` is [num_nodes x in_features] float32 (CPU; the
// store's own array may be wrapped with from_blob); the model runs in eval
// mode under no_grad (the caller's mode is restored).
at::Tensor full_neighbour_logits(GnnModel& model, const GraphStore& store, const at::Tensor& features,
                                 std::span<const int64_t> nodes, const InferenceOptions& options);

struct InferenceOutputs {
  at::Tensor logits;      // [nodes x classes]
  at::Tensor embeddings;  // [nodes x width of that layer], when asked for
};
// The same, plus the output of layer `embedding_layer` (its number, 1 =
// the first; after its ReLU for a hidden layer) at `nodes`; 0: none.
InferenceOutputs full_neighbour_outputs(GnnModel& model, const GraphStore& store, const at::Tensor& features,
                                        std::span<const int64_t> nodes, const InferenceOptions& options,
                                        int64_t embedding_layer);

// Layer-wise full-neighbour inference on a partitioned graph (dgcn-train
// --data DIR): each rank computes every layer for the nodes its part owns;
// before each layer, the rows of the neighbours other parts own (the halo)
// come from their owners in one all-to-all (their degrees once, up front).
// Each row sums the same terms in the same order as full_neighbour_outputs
// on the whole graph; the dense products run over other row blocks, so
// values agree up to float rounding. Collective over `comm` (rank = the
// part's index); `features` is the part's [num_nodes x in_features] (CPU);
// `nodes` are whole-graph ids the part owns.
InferenceOutputs partitioned_full_neighbour_outputs(GnnModel& model, const GraphStore& part,
                                                    const PartMap& map, Collectives& comm,
                                                    const at::Tensor& features,
                                                    std::span<const int64_t> nodes,
                                                    const InferenceOptions& options, int64_t embedding_layer);

}  // namespace dgcn
