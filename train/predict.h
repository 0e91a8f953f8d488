// Predictions and embeddings of a trained model (dgcn-predict): the model
// (GCN, GraphSAGE or GAT) is rebuilt from its checkpoint's record alone (train/run_config.h), and
// layer-wise full-neighbour inference (models/inference.h, the code behind
// dgcn-train's evaluation) runs on 1..N ranks, each on its slice of the
// chosen nodes (train/evaluation_split.h); rank 0 gathers the rows and
// writes .npy files numpy reads with np.load:
//
//   PREFIX.node_ids.npy    int64 [N]: the nodes' ids in the source dataset
//                          (also after dgcn-prep --reorder: the store keeps them)
//   PREFIX.class.npy       int64 [N]: the predicted class (multi-label: none)
//   PREFIX.probs.npy       float32 [N x C]: softmax, or sigmoid for multi-label
//   PREFIX.logits.npy      float32 [N x C]
//   PREFIX.embeddings.npy  float32 [N x H]: one hidden layer's output
#pragma once

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "distributed/process_group.h"
#include "graph/graph_store.h"
#include "models/precision.h"

namespace dgcn {

struct PredictOptions {
  std::string checkpoint;  // a checkpoint file, or a folder: its best.pt, else its newest
  std::string out;         // PREFIX of the files written
  // all, train, valid, test, or an .npy file of source-dataset node ids.
  std::string nodes = "test";
  std::vector<std::string> what{"class", "probs"};  // of class, probs, logits, embeddings
  // Embeddings: the number of the layer whose output they are (1 = the
  // first); 0: the last before the classifier (the last layer with a
  // linear head, else the one before it).
  int64_t layer = 0;
  int64_t chunk_rows = 1 << 16;                            // inference rows per chunk
  c10::Device device = c10::Device(c10::DeviceType::CPU);  // where inference runs
  // fp32 or bf16 inference (Note [Mixed precision] in models/gcn.h); unset:
  // the precision the checkpoint was trained in.
  std::optional<Precision> precision;
};

// Collective over `group`. Returns
// on rank 0 the summary dgcn-predict prints ({"rows", "files", "checkpoint",
// "epoch", "metric": accuracy or micro-F1 over the chosen nodes that have
// labels, "labelled"}), null elsewhere. Throws dgcn::Error / c10::Error on a
// checkpoint of a model this dgcn cannot build, a store it does not fit, bad options.
nlohmann::json predict(const GraphStore& store, const PredictOptions& options, ProcessGroup& group,
                       int compute_threads);

// The store ids `spec` names (all, train, valid, test, or FILE.npy of source
// ids, mapped through store.source_ids); throws naming an id not in the store.
std::vector<int64_t> resolve_nodes(const GraphStore& store, const std::string& spec);

}  // namespace dgcn
