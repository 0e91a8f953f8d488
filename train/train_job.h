// The front door of GCN training: one call from options to a result, used
// by dgcn-train (the Python package does not link train/; a Python user
// writes their own loop over dgcn's ops and loader). It opens the data by the one rule
// (train/open_data.h), records the run (train/run_config.h), trains on every
// rank of the caller's process group (train/gcn_run.h), writes the metrics
// log and the plot on rank 0, and returns the summary dgcn-train prints.
// Process-wide acts (threads, allocator) are the caller's
// (apps/cli/process_settings.h); so is the process group.
//
//   auto group = ProcessGroup::create(rank_env_from_process(), {});
//   TrainJobResult r = run_train_job(options, *group);
//   if (group->rank() == 0) std::cout << r.summary.dump() << "\n";
//   group->shutdown();
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "distributed/process_group.h"
#include "train/gcn_trainer.h"
#include "train/open_data.h"
#include "train/training_plot.h"
#include "train/training_seeds.h"

namespace dgcn {

struct TrainJobOptions {
  DataSource data;
  int local_world_size = 1;              // ranks on this machine (DataSource::load's kAuto)
  std::optional<SeedMode> seeds;         // partitioned graphs only; unset: local there
  TrainOptions train;                    // train.compute_threads also loads and generates the data
  std::string checkpoint_dir;            // save a checkpoint here after every epoch; empty: none
  bool resume = false;                   // continue from the newest checkpoint in checkpoint_dir
  int64_t checkpoint_every_batches = 0;  // > 0: also inside epochs
  std::string metrics_out;               // rank 0 appends one JSON line per epoch (train/metrics_log.h)
  std::string plot;                      // rank 0 draws the curves into FILE.png / FILE.svg after training
  std::string plot_title_prefix = "dgcn-train";
  std::string start_gate;  // wait here before the first epoch (train/start_gate.h); empty: none
};

struct TrainJobResult {
  // Rank 0: the JSON summary (data, device, metrics, best epoch, times,
  // param_digest, memory per rank, the run's record); null on other ranks.
  nlohmann::json summary;
  TrainSummary train;                      // every rank
  std::vector<std::string> files_written;  // rank 0: the metrics log and the plot, when asked for
  // Rank 0: the epochs --plot draws: a resumed run's earlier epochs from its
  // --metrics-out file, then the epochs it trained.
  std::vector<CurvePoint> curve;
};

// Called on rank 0 with the summary before the plot is drawn, so a plot that
// fails does not take the result with it.
using SummaryCallback = std::function<void(const nlohmann::json&)>;

// Collective over `group`. Throws dgcn::Error / c10::Error on bad options or
// data, on a checkpoint of another run, and when a collective fails.
TrainJobResult run_train_job(const TrainJobOptions& options, ProcessGroup& group,
                             const SummaryCallback& on_summary = {});

// "<prefix>: data/small.gcn, 3-layer GCN [15,10,5] hidden 128, linear head": the plot's title.
std::string plot_title(const std::string& prefix, const std::string& source, const TrainOptions& options);

}  // namespace dgcn
