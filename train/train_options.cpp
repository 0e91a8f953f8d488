#include "train/train_options.h"

#include <ATen/Parallel.h>

#include <algorithm>

namespace dgcn {

LoaderOptions loader_options(const std::vector<int64_t>& fanouts, const TrainOptions& o,
                             bool gather_features) {
  LoaderOptions l;
  l.sampler.fanouts = fanouts;
  l.num_workers = o.loader_workers;
  l.queue_depth = o.loader_queue;
  l.gather_features = gather_features;
  return l;
}

int compute_threads_of(const TrainOptions& o) {
  return o.compute_threads > 0 ? o.compute_threads : std::max(1, at::get_num_threads());
}

}  // namespace dgcn
