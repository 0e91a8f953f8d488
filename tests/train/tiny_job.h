// The small training job the train/ tests share: the tiny preset, two
// 5-neighbour hops, two epochs on one thread.
#pragma once

#include "train/train_job.h"

namespace dgcn::testing {

inline TrainJobOptions tiny_job() {
  TrainJobOptions job;
  job.data.preset = "tiny";
  job.train.fanouts = {5, 5};
  job.train.batch_size = 256;
  job.train.hidden = 16;
  job.train.epochs = 2;
  job.train.compute_threads = 1;
  return job;
}

}  // namespace dgcn::testing
