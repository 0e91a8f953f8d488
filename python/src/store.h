// dgcn._C.Store: an open `.gcn` store (graph/store_format.h) or one built
// from tensors (a PyG Data), its arrays as tensors without copying; and the
// readers of dgcn-prep's layouts, which return one.
// Included once, by python/src/module.cpp: dgcn._C's pybind11 objects stay
// one translation unit, as torch's and pybind11's headers cost ~8 s a unit
// here (Note [Build layout] in CMakeLists.txt); the files only split it by
// topic. Hence the unnamed namespace.
#pragma once

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/parallel.h"
#include "datasets/graphsaint_reader.h"
#include "datasets/npz_reader.h"
#include "datasets/ogb_reader.h"
#include "datasets/planetoid_reader.h"
#include "datasets/splits.h"
#include "datasets/store_assembly.h"
#include "graph/graph_store.h"
#include "graph/store_format.h"
#include "models/batch_tensors.h"
#include "models/metrics.h"
#include "python/src/bind_util.h"

namespace dgcn {
namespace {

class Store {
 public:
  explicit Store(GraphStore store, LoadStats stats = {})
      : store_(std::make_shared<const GraphStore>(std::move(store))), stats_(std::move(stats)) {}

  static Store open(const std::filesystem::path& path, bool mmap, bool validate, int num_threads,
                    const std::string& cache_dir) {
    TORCH_CHECK_VALUE(cache_dir.empty() || mmap, "open_store: cache_dir = '", cache_dir,
                      "' is where mmap=True keeps its cache; a private load (mmap=False) writes none");
    LoadOptions options;
    options.mode = mmap ? LoadMode::kSharedCache : LoadMode::kPrivate;
    options.cache_dir = cache_dir;
    options.threads = num_threads;
    options.validate = validate;
    LoadStats stats;
    GraphStore store;
    {
      py::gil_scoped_release release;
      store = load_store(path.string(), options, &stats);
    }
    return Store(std::move(store), std::move(stats));
  }

  // A store from a graph given as tensors (a PyG Data): edges src -> dst of
  // edge_index become CSR rows of the targets (no symmetrization; self-loops
  // and duplicate edges dropped), y (int64 classes, -1 unlabelled) a
  // single-label task, the index tensors the splits. Checked like a file.
  static Store from_tensors(int64_t num_nodes, const at::Tensor& edge_index,
                            const std::optional<at::Tensor>& x, const std::optional<at::Tensor>& y,
                            const at::Tensor& train, const at::Tensor& valid, const at::Tensor& test,
                            int num_threads) {
    TORCH_CHECK_VALUE(num_nodes >= 1, "from_pyg: num_nodes = ", num_nodes, ", expected >= 1");
    TORCH_CHECK_VALUE(edge_index.dim() == 2 && edge_index.size(0) == 2,
                      "from_pyg: edge_index must be [2, E] (got ", edge_index.sizes(), ")");
    const at::Tensor e = cpu_int64(edge_index.reshape({-1}), "from_pyg: edge_index");
    const int64_t m = edge_index.size(1);
    GraphStore store;
    std::vector<int64_t> src(e.data_ptr<int64_t>(), e.data_ptr<int64_t>() + m);
    std::vector<int64_t> dst(e.data_ptr<int64_t>() + m, e.data_ptr<int64_t>() + 2 * m);
    nlohmann::json meta;
    {
      py::gil_scoped_release release;
      EdgeOptions edges{.symmetrize = false, .drop_self_loops = true, .drop_duplicates = true};
      meta["edges"] = set_graph(store, num_nodes, std::move(src), std::move(dst), edges,
                                resolve_threads(num_threads), "from_pyg: edge_index");
    }
    if (x.has_value() && x->defined()) {
      TORCH_CHECK_VALUE(x->dim() == 2 && x->size(0) == num_nodes,
                        "from_pyg: x must be [num_nodes = ", num_nodes, ", F] (got ", x->sizes(), ")");
      const at::Tensor f = x->to(at::kCPU, at::kFloat).contiguous();
      store.num_features = f.size(1);
      const float* begin = f.data_ptr<float>();
      store.features = Buffer::from_vector(std::vector<float>(begin, begin + f.numel()));
    }
    if (y.has_value() && y->defined()) {
      TORCH_CHECK_VALUE(y->dim() == 1 && y->size(0) == num_nodes,
                        "from_pyg: y must be [num_nodes = ", num_nodes, "] class ids (got ", y->sizes(),
                        "; multi-label y is not supported)");
      const at::Tensor c = cpu_int64(*y, "from_pyg: y");
      std::vector<int32_t> labels(static_cast<size_t>(num_nodes));
      for (int64_t v = 0; v < num_nodes; ++v) {  // the readers' rule (datasets/store_assembly.h)
        const int64_t k = c.data_ptr<int64_t>()[v];
        const std::string problem = label_problem(k, 0);
        TORCH_CHECK_VALUE(problem.empty(), "from_pyg: y[", v, "] = ", k, " is ", problem);
        labels[v] = static_cast<int32_t>(k);
      }
      as_value_error([&] { set_single_labels(store, std::move(labels), 0, "from_pyg: y"); });
    }
    store.train = sorted_ids(train, "from_pyg: train");
    store.valid = sorted_ids(valid, "from_pyg: valid");
    store.test = sorted_ids(test, "from_pyg: test");
    meta["reader"] = "dgcn.data.from_pyg";
    store.metadata_json = meta.dump();
    {
      py::gil_scoped_release release;
      as_value_error([&] { store.validate("from_pyg", resolve_threads(num_threads)); });
    }
    return Store(std::move(store));
  }

  void save(const std::filesystem::path& path, bool compress, int num_threads) const {
    SaveOptions options;
    options.all_raw = !compress;
    options.threads = num_threads;
    py::gil_scoped_release release;
    save_store(*store_, path.string(), options);
  }

  const GraphStore& get() const { return *store_; }
  const std::shared_ptr<const GraphStore>& shared() const { return store_; }
  bool mapped() const { return stats_.mapped; }

  at::Tensor x() const {
    return view_of(store_, store_->features, {num_nodes(), store_->num_features}, at::kFloat);
  }
  // Single-label: int32 [N] (-1 unlabelled); multi-label: uint8 [N, label_row_bytes] bit rows.
  at::Tensor labels() const {
    if (store_->task == Task::kMultiLabel) {
      return view_of(store_, store_->labels, {num_nodes(), store_->label_row_bytes()}, at::kByte);
    }
    return view_of(store_, store_->labels, {store_->labels.empty() ? 0 : num_nodes()}, at::kInt);
  }
  // The labels as the loss takes them, by the trainer's rule
  // (models/metrics.h targets_from_rows): int64 [N] classes (-1 unlabelled),
  // or float {0, 1} [N, num_classes] unpacked from the multi-label bit rows.
  at::Tensor targets() const {
    return targets_from_rows(*store_, store_->labels.as<std::byte>(), num_nodes());
  }
  at::Tensor rowptr() const {
    return view_of(store_, store_->graph.indptr_buffer(), {num_nodes() + 1}, at::kLong);
  }
  at::Tensor col() const {
    const bool wide = store_->graph.id_width() == IdWidth::k64;
    return view_of(store_, store_->graph.indices_buffer(), {store_->num_edges()},
                   wide ? at::kLong : at::kInt);
  }
  at::Tensor degree() const { return view_of(store_, store_->degree, {num_nodes()}, at::kInt); }
  at::Tensor ids(const Buffer& b) const {
    return view_of(store_, b, {static_cast<int64_t>(b.size() / sizeof(int64_t))}, at::kLong);
  }
  int64_t num_nodes() const { return store_->num_nodes(); }

  // Rows [begin, end) of the whole graph's normalized adjacency (self-loops,
  // full degrees; columns = node ids): one chunk of layer-wise inference
  // (models/batch_tensors.h full_rows_adjacency).
  std::tuple<at::Tensor, at::Tensor, at::Tensor> adjacency_rows(int64_t begin, int64_t end) const {
    TORCH_CHECK_VALUE(0 <= begin && begin <= end && end <= num_nodes(), "adjacency_rows: [", begin, ", ", end,
                      ") is not a range of rows in [0, ", num_nodes(), ")");
    TORCH_CHECK_VALUE(!store_->part.is_part(),
                      "adjacency_rows: this store is one part of a partitioned graph; "
                      "layer-wise inference needs the whole graph's store");
    std::vector<int64_t> rows(static_cast<size_t>(end - begin));
    std::iota(rows.begin(), rows.end(), begin);
    py::gil_scoped_release release;
    CsrTensor a = full_rows_adjacency(store_->graph, store_->degrees(), rows);
    return {a.indptr, a.indices, a.values};
  }

 private:
  std::shared_ptr<const GraphStore> store_;
  LoadStats stats_;
};

void bind_store(py::module_& m) {
  py::class_<Store>(m, "Store")
      .def_static("open", &Store::open, py::arg("path"), py::arg("mmap") = false, py::arg("validate") = true,
                  py::arg("num_threads") = 0, py::arg("cache_dir") = "")
      .def_static("from_tensors", &Store::from_tensors, py::arg("num_nodes"), py::arg("edge_index"),
                  py::arg("x"), py::arg("y"), py::arg("train"), py::arg("valid"), py::arg("test"),
                  py::arg("num_threads") = 0)
      .def("save", &Store::save, py::arg("path"), py::arg("compress") = true, py::arg("num_threads") = 0)
      .def_property_readonly("num_nodes", &Store::num_nodes)
      .def_property_readonly("num_edges", [](const Store& s) { return s.get().num_edges(); })
      .def_property_readonly("num_features", [](const Store& s) { return s.get().num_features; })
      .def_property_readonly("num_classes", [](const Store& s) { return s.get().num_classes; })
      .def_property_readonly("task",
                             [](const Store& s) { return std::string(dgcn::task_name(s.get().task)); })
      .def_property_readonly("is_part", [](const Store& s) { return s.get().part.is_part(); })
      .def_property_readonly("part_index", [](const Store& s) { return s.get().part.index; })
      .def_property_readonly("mapped", &Store::mapped)
      .def_property_readonly("metadata_json", [](const Store& s) { return s.get().metadata_json; })
      .def(
          "content_digest",
          [](const Store& s, int threads) {
            // 0: every core (a raw 0 would hash no chunk at all).
            return dgcn::content_digest(s.get(), dgcn::resolve_threads(threads));
          },
          py::arg("num_threads") = 1)
      .def_property_readonly("x", &Store::x)
      .def_property_readonly("labels", &Store::labels)
      .def("targets", &Store::targets)
      .def_property_readonly("rowptr", &Store::rowptr)
      .def_property_readonly("col", &Store::col)
      .def_property_readonly("degree", &Store::degree)
      .def("adjacency_rows", &Store::adjacency_rows, py::arg("begin"), py::arg("end"))
      .def_property_readonly("train_index", [](const Store& s) { return s.ids(s.get().train); })
      .def_property_readonly("val_index", [](const Store& s) { return s.ids(s.get().valid); })
      .def_property_readonly("test_index", [](const Store& s) { return s.ids(s.get().test); });

  // The readers of dgcn-prep's layouts (datasets/*_reader.h), with their
  // checks and messages: a bad option is a ValueError, a bad file a
  // RuntimeError naming it. Default edge clean-ups (symmetrize, no loops or
  // duplicates), as dgcn-prep's.
  m.def(
      "read_npz",
      [](const std::string& file, const std::string& split, uint64_t seed, int64_t num_classes,
         int num_threads) {
        dgcn::NpzOptions o;
        o.file = file;
        o.split = dgcn::as_value_error([&] { return dgcn::parse_split_spec(split); });
        o.seed = seed;
        o.num_classes = num_classes;
        o.num_threads = num_threads;
        py::gil_scoped_release release;
        return Store(dgcn::read_npz_dataset(o));
      },
      py::arg("file"), py::arg("split"), py::arg("seed"), py::arg("num_classes"), py::arg("num_threads"));
  m.def(
      "read_ogb",
      [](const std::string& root, int64_t num_classes, int num_threads) {
        dgcn::OgbOptions o;
        o.root = root;
        o.num_classes = num_classes;
        o.num_threads = num_threads;
        py::gil_scoped_release release;
        return Store(dgcn::read_ogb(o));
      },
      py::arg("root"), py::arg("num_classes"), py::arg("num_threads"));
  m.def(
      "read_planetoid",
      [](const std::string& root, const std::string& name, int num_threads) {
        dgcn::PlanetoidOptions o;
        o.root = root;
        o.name = name;
        o.num_threads = num_threads;
        py::gil_scoped_release release;
        return Store(dgcn::read_planetoid(o));
      },
      py::arg("root"), py::arg("name"), py::arg("num_threads"));
  m.def(
      "read_graphsaint",
      [](const std::string& root, int64_t num_classes, int num_threads) {
        dgcn::GraphSaintOptions o;
        o.root = root;
        o.num_classes = num_classes;
        o.num_threads = num_threads;
        py::gil_scoped_release release;
        return Store(dgcn::read_graphsaint(o));
      },
      py::arg("root"), py::arg("num_classes"), py::arg("num_threads"));
}

}  // namespace
}  // namespace dgcn
