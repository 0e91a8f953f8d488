// The record of what produced a result: a run's effective configuration as
// one JSON object, carried by every checkpoint, the first line of the
// metrics file and the JSON summary, and checked when a run resumes.
//
//   {"version": "0.1.0", "seed": 0,
//    "model": {"kind": "gcn", "fanouts": [15, 10, 5], "hidden": 128, ...},
//    "optimizer": {"name": "adam", "lr": 0.01, ...},
//    "run": {"batch_size": 1024, "world_size": 2, "threads": 1},
//    "data": {"path": "data/small.gcn", "digest": "9f..", "num_nodes": 100000}}
//
// Note [What a resume may change]
// A checkpoint belongs to one run: the same data (by digest), model,
// optimizer and seed. Resuming it with another value of any of those would
// silently train something else, so it is an error naming each field with
// both values. What only steers how the run goes on may change and is
// logged: the learning rate (applied to the restored optimizer), the run
// settings (ranks, threads, batch size: the continuation is a different but
// valid run), the data's path (the digest says it is the same data), dgcn's
// version. Epochs, evaluation cadence and outputs are not part of the
// record at all.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "distributed/replica_check.h"

namespace dgcn {

struct ConfigChange {
  std::string field;          // dotted path, e.g. "model.hidden"
  std::string before, after;  // the JSON values in the checkpoint and in this run
};

struct ConfigComparison {
  std::vector<ConfigChange> forbidden;  // the checkpoint belongs to another run
  std::vector<ConfigChange> allowed;    // may change (Note [What a resume may change])
};

// Every leaf where `checkpoint` and `run` differ (a field missing on one
// side counts as null), sorted by field. Between two models (model.kind
// differs) the other model.* fields are not listed: the kind is the change.
ConfigComparison compare_configs(const nlohmann::json& checkpoint, const nlohmann::json& run);

// What every rank of one job must share, checked before the first broadcast
// (distributed/replica_check.h): every leaf of `config` but those that are a
// rank's or a machine's own (data.path, run.threads, run.device), as
// "model.hidden" = "128".
std::vector<ReplicaField> replica_settings(const nlohmann::json& config);

// "seed was 1, this run has 2; model.hidden was 128, this run has 64".
std::string describe_changes(const std::vector<ConfigChange>& changes);

}  // namespace dgcn
