#include "datasets/npz_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "base/buffer.h"
#include "base/error.h"
#include "base/parallel.h"
#include "datasets/npz.h"
#include "datasets/sparse_matrix.h"
#include "datasets/store_assembly.h"

namespace dgcn {

namespace {

void read_features(const NpzArchive& npz, int64_t n, uint64_t max_bytes, GraphStore& store) {
  const std::string& path = npz.path();
  if (npz.contains("attr_data")) {
    SparseMatrix x = read_sparse_csr(npz, {"attr_data", "attr_indices", "attr_indptr", "attr_shape"}, true);
    DGCN_CHECK(x.rows == n, "{}: attr_shape has {} rows, adj_shape {} nodes", path, x.rows, n);
    store.num_features = x.cols;
    store.features = to_dense(x, path + ": attr_shape", max_bytes ? max_bytes : physical_memory_bytes());
  } else if (npz.contains("attr_matrix")) {
    NpyArray x = npz.array("attr_matrix");
    DGCN_CHECK(x.shape().size() == 2 && x.shape()[0] == n, "{}: attr_matrix has shape {}, expected ({}, F)",
               path, x.header.shape_string(), n);
    store.num_features = x.shape()[1];
    store.features = to_float32(x, path + ": attr_matrix");
  } else {
    return;
  }
  auto f = store.features.as<float>();
  auto bad = std::find_if(f.begin(), f.end(), [](float v) { return !std::isfinite(v); });
  const int64_t cols = std::max<int64_t>(1, store.num_features);
  DGCN_CHECK(bad == f.end(), "{}: feature [node {}, column {}] is {}, features must be finite", path,
             (bad - f.begin()) / cols, (bad - f.begin()) % cols, bad == f.end() ? 0.0f : *bad);
}

void read_labels(const NpzArchive& npz, int64_t n, int64_t num_classes, GraphStore& store) {
  const std::string& path = npz.path();
  NpyArray array = npz.array("labels");
  DGCN_CHECK(array.shape().size() == 1 && array.count() == n,
             "{}: labels has shape {}, expected ({},) (one class per node)", path,
             array.header.shape_string(), n);
  std::vector<int64_t> values = to_int64(array, path + ": labels");
  std::vector<int32_t> labels(values.size());
  for (size_t v = 0; v < values.size(); ++v) {
    const std::string problem = label_problem(values[v], num_classes);
    DGCN_CHECK(problem.empty(), "{}: labels[{}] is {}, {}", path, v, values[v], problem);
    labels[v] = static_cast<int32_t>(values[v]);
  }
  set_single_labels(store, std::move(labels), num_classes, path);
}

}  // namespace

GraphStore read_npz_dataset(const NpzOptions& options) {
  const int threads = resolve_threads(options.num_threads);
  NpzArchive npz(options.file);
  GraphStore store;
  nlohmann::json meta = {{"reader", "npz"}, {"file", options.file}};

  SparseMatrix adj = read_sparse_csr(npz, {"adj_data", "adj_indices", "adj_indptr", "adj_shape"}, false);
  DGCN_CHECK(adj.rows == adj.cols, "{}: adj_shape ({}, {}) is not square", options.file, adj.rows, adj.cols);
  const int64_t n = adj.rows;
  {
    std::vector<int64_t> src = row_ids(adj);
    std::vector<int64_t> dst = std::move(adj.indices);
    adj = SparseMatrix{};
    meta["edges"] = set_graph(store, n, std::move(src), std::move(dst), options.edges, threads, options.file);
  }
  read_features(npz, n, options.max_feature_bytes, store);
  if (npz.contains("labels")) read_labels(npz, n, options.num_classes, store);

  std::span<const int32_t> labels;
  if (store.task == Task::kSingleLabel) labels = store.labels.as<int32_t>();
  try {
    set_splits(store, make_splits(options.split, n, labels, store.num_classes, options.seed));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", options.file, e.what()));
  }
  meta["split"] = options.split.to_string();
  meta["seed"] = options.seed;
  meta["num_classes"] = store.num_classes;
  std::vector<std::string> skipped;
  for (const auto& key : npz.keys()) {
    if (!key.starts_with("adj_") && !key.starts_with("attr_data") && !key.starts_with("attr_ind") &&
        key != "attr_shape" && key != "attr_matrix" && key != "labels") {
      skipped.push_back(key);
    }
  }
  meta["skipped_arrays"] = skipped;
  spdlog::info("npz: {}: {} nodes, {} CSR entries, {} features, {} classes (skipped: {})", options.file, n,
               store.num_edges(), store.num_features, store.num_classes, fmt::join(skipped, ", "));
  store.metadata_json = meta.dump();
  store.validate("npz: " + options.file, threads);
  return store;
}

}  // namespace dgcn
