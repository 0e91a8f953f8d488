// Test helper: a store's float features as a torch tensor.
#pragma once

#include <torch/torch.h>

#include "graph/graph_store.h"

namespace dgcn::testing {

// A view of s.features (no copy): valid while s lives; the tests only read it.
inline torch::Tensor features_of(const GraphStore& s) {
  return torch::from_blob(const_cast<float*>(s.features.as<float>().data()), {s.num_nodes(), s.num_features},
                          torch::kFloat);
}

}  // namespace dgcn::testing
