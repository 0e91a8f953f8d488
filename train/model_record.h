// The model of a training run as options (what make_model builds,
// models/gnn.h) and as the "model" section of the run's record
// (train/run_config.h), which checkpoints carry: dgcn-predict rebuilds the
// model from that record alone, and a resume of another model is refused
// by it (Note [What a resume may change]).
//
//   GCN:  {"kind": "gcn", "layers": 2, "hidden": 128, "norm": "full", ...}
//   SAGE: {"kind": "sage", ...} (no "norm": SAGE averages its neighbours)
//   GAT:  {"kind": "gat", "heads": 8, "attention_dropout": 0.6, ...}
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "graph/graph_store.h"
#include "models/model_options.h"
#include "train/train_options.h"

namespace dgcn {

// The model `o` trains on `store` (its features and classes).
ModelOptions model_options(const TrainOptions& o, const GraphStore& store);

// Completes a run record's "model" section written with the GCN fields for
// o.model: the kind's name, its own settings (GAT: heads, attention
// dropout), none it lacks (SAGE and GAT: no GCN norm). GCN's section stays
// as it was before other models existed.
void complete_model_record(nlohmann::json& model, const TrainOptions& o);

// The model a run record's "model" section describes; throws dgcn::Error
// naming `what` (the checkpoint) and the field when one is missing, and on
// a kind this dgcn does not know.
ModelOptions model_options_of_record(const nlohmann::json& config, const std::string& what);

}  // namespace dgcn
