// Which model the engine trains (dgcn-train --model) and its settings,
// without the models' headers, so that options and run records carry them
// cheaply. The models themselves are in models/gnn.h (make_model builds one).
#pragma once

#include <cstdint>
#include <string>

#include "models/precision.h"

namespace dgcn {

enum class ModelKind {
  kGcn,   // Kipf & Welling's GCN (models/gcn.h)
  kSage,  // GraphSAGE with mean aggregation, as PyG's SAGEConv (models/sage.h)
  kGat,   // GAT, multi-head attention, as PyG's GATConv (models/gat.h)
};
const char* model_kind_name(ModelKind kind);       // "gcn", "sage", "gat"
ModelKind parse_model_kind(const std::string& s);  // inverse; throws dgcn::Error naming the choices

// Everything any model is built from; a model refuses settings it lacks
// (heads or attention dropout on a model without attention).
struct ModelOptions {
  ModelKind kind = ModelKind::kGcn;
  int64_t in_features = 0;
  int64_t hidden = 128;  // GAT: features per head (PyG's GATConv(out_channels, heads))
  int64_t num_classes = 0;
  int64_t num_layers = 2;                  // = number of fanouts
  double dropout = 0.5;                    // after every hidden activation
  double input_dropout = 0.0;              // on the input features
  bool linear_head = false;                // a final Linear(width, classes) after the last layer
  int64_t heads = 1;                       // GAT only: attention heads of every hidden layer
  double attention_dropout = 0.0;          // GAT only: dropout on the attention coefficients
  Precision precision = Precision::kFp32;  // Note [Mixed precision] in models/gcn.h (GCN only)
};

}  // namespace dgcn
