// The input features the model sees, shared by training and prediction:
// the store's own, or with normalize PyG's NormalizeFeatures applied (a
// normalized copy; the store is not changed).
//
//   store.features = input_features(store, /*normalize=*/true, threads);
#pragma once

#include "base/buffer.h"
#include "graph/graph_store.h"
#include "partition/collectives.h"

namespace dgcn {

// The features as PyG's NormalizeFeatures leaves them, as a new buffer:
// shifted by the smallest feature of the whole matrix (so every value is >=
// 0), then each row divided by its sum clamped at 1 (rows summing below 1,
// all-zero rows too, are only shifted). `num_threads` threads.
Buffer normalized_features(const GraphStore& store, int num_threads);
// The same with the shift given: a part of a partitioned graph shifts by
// the smallest feature of all parts.
Buffer normalized_features(const GraphStore& store, int num_threads, float lowest);
// The smallest feature of the store (0 without features).
float smallest_feature(const GraphStore& store, int num_threads);

// The model's input features: store.features (shared, no copy), or
// normalized. On a part of a partitioned graph pass the ranks' `parts`:
// collective, every part shifts by the smallest feature of all parts, so
// the parts hold the whole graph's normalized rows.
Buffer input_features(const GraphStore& store, bool normalize, int num_threads, Collectives* parts = nullptr);

}  // namespace dgcn
