// dgcn._C: the stateful objects of the `dgcn` Python package, over pybind11
// with torch's tensor casters (docs/design.md, "python/"):
//   Store       an open `.gcn` store (graph/store_format.h) or one built from
//               tensors (a PyG Data); its arrays as tensors without copying
//   Loader      sampling/loader.h's NeighborLoader: C++ worker threads sample
//               and gather ahead of Python, which waits with the GIL released
//   plan_epoch  sampling/seed_partition.h: one rank's seeds for one epoch
// dgcn::Error from argument checks becomes ValueError, from data or files
// RuntimeError; c10::Error its Python type. The Python side is python/dgcn/.
#include <ATen/ATen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/parallel.h"
#include "base/version.h"
#include "datasets/graphsaint_reader.h"
#include "datasets/npz_reader.h"
#include "datasets/ogb_reader.h"
#include "datasets/planetoid_reader.h"
#include "datasets/splits.h"
#include "datasets/store_assembly.h"
#include "graph/graph_store.h"
#include "graph/store_format.h"
#include "models/batch_tensors.h"
#include "models/cpu_allocator.h"
#include "models/gcn.h"
#include "models/metrics.h"
#include "models/spmm.h"
#include "partition/collectives.h"
#include "partition/part_loading.h"
#include "partition/part_map.h"
#include "sampling/block_edges.h"
#include "sampling/edge_positions.h"
#include "sampling/loader.h"
#include "sampling/partitioned_sampler.h"
#include "sampling/seed_partition.h"

namespace py = pybind11;

namespace dgcn {
namespace {

// Runs `f`, turning a dgcn::Error into ValueError: for checks of the
// caller's arguments, which the C++ library reports as dgcn::Error.
template <class F>
decltype(auto) as_value_error(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw py::value_error(e.what());
  }
}

// A tensor over `bytes` of a store's array, sharing it: the tensor holds the
// store alive (the deleter context), nothing is copied. Arrays of a mapped
// store are read-only memory: writing to such a tensor faults.
at::Tensor view_of(const std::shared_ptr<const GraphStore>& store, const Buffer& bytes,
                   std::vector<int64_t> sizes, at::ScalarType type) {
  if (bytes.empty()) return at::empty(sizes, at::TensorOptions(type));
  auto* owner = new std::shared_ptr<const GraphStore>(store);
  return at::from_blob(
      const_cast<std::byte*>(bytes.data()), sizes, [owner](void*) { delete owner; }, at::TensorOptions(type));
}

at::Tensor cpu_int64(const at::Tensor& t, const char* name) {
  TORCH_CHECK_VALUE(!at::isFloatingType(t.scalar_type()) && t.scalar_type() != at::kBool, name,
                    " must hold integer node ids (got ", t.scalar_type(), ")");
  TORCH_CHECK_VALUE(t.dim() == 1, name, " must be 1-D (got ", t.sizes(), ")");
  return t.to(at::kCPU, at::kLong).contiguous();
}

std::span<const int64_t> span_of(const at::Tensor& t) {
  return {t.data_ptr<int64_t>(), static_cast<size_t>(t.numel())};
}

Buffer sorted_ids(const at::Tensor& t, const char* name) {
  at::Tensor ids = std::get<0>(at::sort(cpu_int64(t, name)));
  return Buffer::copy_of(span_of(ids));
}

class Store {
 public:
  explicit Store(GraphStore store, LoadStats stats = {})
      : store_(std::make_shared<const GraphStore>(std::move(store))), stats_(std::move(stats)) {}

  static Store open(const std::filesystem::path& path, bool mmap, bool validate, int num_threads) {
    LoadOptions options;
    options.mode = mmap ? LoadMode::kSharedCache : LoadMode::kPrivate;
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

// One rank's plan for one epoch (seed_partition.h) as (seeds, num_batches).
EpochPlan make_plan(const at::Tensor& nodes, uint64_t seed, int64_t epoch, int rank, int world_size,
                    int64_t batch_size, bool shuffle, bool drop_last) {
  ShardOptions o{.seed = seed,
                 .epoch = epoch,
                 .rank = rank,
                 .world_size = world_size,
                 .batch_size = batch_size,
                 .shuffle = shuffle,
                 .drop_last = drop_last};
  py::gil_scoped_release release;
  return as_value_error([&] { return plan_epoch(span_of(nodes), o); });
}

// The collectives of a partitioned graph (partition/collectives.h) over the
// user's torch.distributed: Python callables (python/dgcn/data.py's
// _TorchCollectives, on a Gloo group of their own, so the loader's worker
// never interleaves with DDP's collectives on the default group). Called
// from the loader's one worker thread, which takes the GIL for each call;
// torch's collectives release it while they wait.
class PyCollectives final : public Collectives {
 public:
  PyCollectives(int rank, int size, py::object exchange, py::object sum, py::object barrier)
      : rank_(rank),
        size_(size),
        exchange_(std::move(exchange)),
        sum_(std::move(sum)),
        barrier_(std::move(barrier)) {}
  ~PyCollectives() override {
    py::gil_scoped_acquire gil;
    exchange_ = py::object();
    sum_ = py::object();
    barrier_ = py::object();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void exchange(const Messages& send, Messages& received) override {
    DGCN_CHECK(send.count() == size_, "exchange: {} messages for {} ranks", send.count(), size_);
    py::gil_scoped_acquire gil;
    std::vector<int64_t> sizes(static_cast<size_t>(size_));
    for (int q = 0; q < size_; ++q) sizes[static_cast<size_t>(q)] = send.size_of(q);
    const at::Tensor payload =
        at::from_blob(const_cast<std::byte*>(send.bytes.data()), {static_cast<int64_t>(send.bytes.size())},
                      at::TensorOptions(at::kByte));
    auto [recv, recv_sizes] =
        exchange_(payload, at::tensor(sizes, at::kLong)).cast<std::tuple<at::Tensor, at::Tensor>>();
    const at::Tensor got = recv.contiguous();
    const at::Tensor counts = recv_sizes.to(at::kLong).contiguous();
    DGCN_CHECK(counts.numel() == size_, "exchange: {} sizes back for {} ranks", counts.numel(), size_);
    received.begin();
    const auto* bytes = static_cast<const std::byte*>(got.data_ptr());
    int64_t at = 0;
    for (int q = 0; q < size_; ++q) {
      const int64_t n = counts.data_ptr<int64_t>()[q];
      DGCN_CHECK(n >= 0 && at + n <= got.numel(), "exchange: rank {} sent a malformed size {}", q, n);
      received.append(std::span<const std::byte>(bytes + at, static_cast<size_t>(n)));
      received.end_message();
      at += n;
    }
  }
  std::vector<double> sum(std::vector<double> values) override {
    py::gil_scoped_acquire gil;
    const at::Tensor total = sum_(at::tensor(values, at::kDouble)).cast<at::Tensor>().contiguous();
    return {total.data_ptr<double>(), total.data_ptr<double>() + total.numel()};
  }
  void barrier() override {
    py::gil_scoped_acquire gil;
    barrier_();
  }

 private:
  const int rank_, size_;
  py::object exchange_, sum_, barrier_;
};

// This rank's part of a partitioned graph (dgcn-prep partition's folder),
// opened with every rank together, and what sampling it needs: the map of
// owners and the collectives. dgcn.data.open_partition.
class Partition {
 public:
  Partition(const std::string& dir, int rank, int size, py::object exchange, py::object sum,
            py::object barrier, int num_threads)
      : comm_(std::make_unique<PyCollectives>(rank, size, std::move(exchange), std::move(sum),
                                              std::move(barrier))) {
    LoadOptions load;
    load.threads = num_threads;
    PartitionedData data;
    {
      py::gil_scoped_release release;  // the collectives take it back
      data = load_partition_part(dir, *comm_, load);
    }
    manifest_ = std::move(data.manifest);
    part_ = Store(std::move(data.part));
    map_ = std::make_unique<PartMap>(part_.get().part);
    // Every part's training nodes, in id order: the seeds of a replicated run.
    std::vector<int64_t> train;
    {
      py::gil_scoped_release release;
      for (const auto& nodes : all_gather(*comm_, part_.get().train_nodes())) {
        train.insert(train.end(), nodes.begin(), nodes.end());
      }
    }
    std::sort(train.begin(), train.end());
    train_ = at::tensor(train, at::kLong);
  }
  const Store& part() const { return part_; }
  const PartMap& map() const { return *map_; }
  Collectives& comm() const { return *comm_; }
  int64_t num_nodes() const { return manifest_.num_nodes; }
  int64_t num_edges() const { return manifest_.num_edges; }
  int parts() const { return manifest_.parts; }
  at::Tensor train_index() const { return train_; }

 private:
  std::unique_ptr<PyCollectives> comm_;
  PartitionManifest manifest_;
  Store part_{GraphStore{}};
  std::unique_ptr<PartMap> map_;
  at::Tensor train_;
};

using PyBatch = std::tuple<at::Tensor, at::Tensor, at::Tensor, std::optional<at::Tensor>, at::Tensor, int64_t,
                           std::vector<int64_t>, std::vector<int64_t>, std::optional<at::Tensor>>;

// The loader of sampling/loader.h over a Store or a Partition, whose batches
// come out as tensors: (n_id, edge_index, colptr, x, deg, batch_size,
// num_sampled_nodes, num_sampled_edges, seed_labels) with PyG's conventions
// (colptr [num + 1]: the block's own indptr, edge_index's CSC pointer, so
// that the layers need not sort the edges again)
// (python/dgcn/loader.py); seed_labels (int32, the seeds' classes) only from
// a partition, whose part holds no other node's label.
class Loader {
 public:
  Loader(const Store& store, std::vector<int64_t> fanouts, bool replace, int num_workers, int queue_depth,
         bool gather_features)
      : store_(store.shared()),
        num_nodes_(store.num_nodes()),
        pool_(BatchMemoryPool::create(static_cast<size_t>(queue_depth) + 4)) {
    LoaderOptions options =
        loader_options(std::move(fanouts), replace, num_workers, queue_depth, gather_features);
    as_value_error([&] { require_whole_graph(store_->graph, "NeighborLoader"); });
    as_value_error([&] { loader_ = std::make_unique<NeighborLoader>(*store_, std::move(options)); });
  }

  // Over a partitioned graph: batches sampled with the other ranks
  // (sampling/partitioned_sampler.h), equal to the whole graph's; one worker,
  // so this rank's exchanges run in plan order.
  Loader(const Partition& partition, std::vector<int64_t> fanouts, bool replace, int queue_depth,
         bool gather_features)
      : store_(partition.part().shared()),
        num_nodes_(partition.num_nodes()),
        pool_(BatchMemoryPool::create(static_cast<size_t>(queue_depth) + 4)) {
    LoaderOptions options = loader_options(std::move(fanouts), replace, 1, queue_depth, gather_features);
    as_value_error([&] {
      producer_ = std::make_unique<PartitionedBatchProducer>(*store_, partition.map(), partition.comm(),
                                                             options.sampler, options.gather_features);
      loader_ = std::make_unique<NeighborLoader>(*store_, std::move(options), nullptr, producer_.get());
    });
  }

  ~Loader() {
    py::gil_scoped_release release;  // the workers finish their batch
    loader_.reset();
    producer_.reset();
  }

  // Starts the epoch of `nodes` (checked to be node ids of the store) for
  // this rank; returns its number of batches (the same on every rank).
  int64_t start_epoch(const at::Tensor& nodes, uint64_t seed, int64_t epoch, int rank, int world_size,
                      int64_t batch_size, bool shuffle, bool drop_last) {
    const at::Tensor ids = cpu_int64(nodes, "input_nodes");
    const int64_t n = num_nodes_;
    for (int64_t i = 0; i < ids.numel(); ++i) {
      const int64_t v = ids.data_ptr<int64_t>()[i];
      TORCH_CHECK_VALUE(v >= 0 && v < n, "NeighborLoader: input_nodes[", i, "] = ", v,
                        " is not a node id in [0, ", n, ")");
    }
    EpochPlan plan = make_plan(ids, seed, epoch, rank, world_size, batch_size, shuffle, drop_last);
    const int64_t num_batches = plan.num_batches;
    py::gil_scoped_release release;
    loader_->start_epoch(std::move(plan));
    return num_batches;
  }

  std::optional<PyBatch> next() {
    std::optional<LoadedBatch> batch;
    at::Tensor n_id, edge_index, colptr, deg;
    std::optional<at::Tensor> x, seed_labels;
    int64_t num_seeds = 0;
    std::vector<int64_t> nodes, edges;
    {
      py::gil_scoped_release release;
      batch = loader_->next();
      if (!batch) return std::nullopt;
      SampledBatch& s = batch->sample;
      const int64_t num = static_cast<int64_t>(s.n_id.size());
      const Block& block = s.blocks.front();
      const int64_t m = block.num_edges();
      // n_id [num] int64 | edge_index [2, m] int64 | colptr [num + 1] int64 |
      // deg [num] int32, in one pooled buffer (fresh memory costs a page
      // fault per 4 KiB: sampling/batch_memory.h), viewed as 8-byte words.
      const int64_t words = num + 2 * m + (num + 1) + (num + 1) / 2;
      const BatchMemory memory = pool_->acquire(words, 2, 0, 0);
      auto* base = reinterpret_cast<int64_t*>(memory.features.data());
      std::copy(s.n_id.begin(), s.n_id.end(), base);
      // edge_index: every sampled edge once (blocks[0] holds them all, rows in
      // n_id order, so the edges of hop h come h-th), row 0 the neighbour.
      // colptr: its CSC pointer over the batch's nodes (sampling/block_edges.h).
      int64_t* src = base + num;
      int64_t* dst = src + m;
      int64_t* ptr = dst + m;
      block_to_edge_index(block, num, {src, static_cast<size_t>(m)}, {dst, static_cast<size_t>(m)},
                          {ptr, static_cast<size_t>(num + 1)});
      auto* degree = reinterpret_cast<int32_t*>(ptr + num + 1);
      if (!s.degrees.empty()) {  // a partition's: fetched from the owners
        std::copy(s.degrees.begin(), s.degrees.end(), degree);
      } else {
        const auto degrees = store_->degrees();
        for (int64_t i = 0; i < num; ++i) degree[i] = degrees[s.n_id[i]];
      }
      n_id = leased(base, {num}, at::kLong, memory.lease);
      edge_index = leased(src, {2, m}, at::kLong, memory.lease);
      colptr = leased(ptr, {num + 1}, at::kLong, memory.lease);
      deg = leased(degree, {num}, at::kInt, memory.lease);
      if (gather_features_) {
        x = leased(batch->features.data(), {num, store_->num_features}, at::kFloat, batch->lease);
      }
      num_seeds = s.num_seeds;
      if (producer_ && store_->task == Task::kSingleLabel) {
        seed_labels = at::empty({num_seeds}, at::kInt);
        std::memcpy(seed_labels->data_ptr(), batch->labels.data(), static_cast<size_t>(num_seeds) * 4);
      }
      nodes = s.num_nodes_per_hop;
      edges = s.num_edges_per_hop;
      batch->lease.reset();
      loader_->recycle(std::move(*batch));
    }
    return PyBatch{n_id,      edge_index,       colptr,           x,          deg,
                   num_seeds, std::move(nodes), std::move(edges), seed_labels};
  }

  py::dict stats() const {
    const LoaderStats s = loader_->stats();
    py::dict d;
    d["consumer_wait_s"] = s.consumer_wait_s;
    d["worker_blocked_s"] = s.worker_blocked_s;
    d["worker_busy_s"] = s.worker_busy_s;
    d["batches"] = s.batches;
    d["peak_in_flight"] = s.peak_in_flight;
    return d;
  }

 private:
  LoaderOptions loader_options(std::vector<int64_t> fanouts, bool replace, int num_workers, int queue_depth,
                               bool gather_features) {
    LoaderOptions options;
    options.sampler.fanouts = std::move(fanouts);
    options.sampler.replace = replace;
    options.num_workers = num_workers;
    options.queue_depth = queue_depth;
    options.gather_features = gather_features && store_->num_features > 0;
    gather_features_ = options.gather_features;
    as_value_error([&] { check_sampler_options(options.sampler, "NeighborLoader"); });
    return options;
  }

  // A tensor over memory that `lease` keeps alive, holding a copy of it.
  static at::Tensor leased(void* data, std::vector<int64_t> sizes, at::ScalarType type,
                           const std::shared_ptr<void>& lease) {
    auto* owner = new std::shared_ptr<void>(lease);
    return at::from_blob(
        data, sizes, [owner](void*) { delete owner; }, at::TensorOptions(type));
  }

  std::shared_ptr<const GraphStore> store_;             // outlives loader_
  int64_t num_nodes_;                                   // of the whole graph: seeds are below it
  std::unique_ptr<PartitionedBatchProducer> producer_;  // a partition's; outlives loader_
  std::unique_ptr<NeighborLoader> loader_;
  // Memory of the batches' n_id, edge_index and deg, reused once Python
  // drops a batch's tensors.
  std::shared_ptr<BatchMemoryPool> pool_;
  bool gather_features_ = false;
};

}  // namespace
}  // namespace dgcn

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  using dgcn::Loader;
  using dgcn::Store;
  m.doc() = "dgcn's C++ engine: stores, the neighbour loader, epoch plans (python/src/module.cpp)";
  m.attr("__version__") = dgcn::dgcn_version();
  m.def("spmm_has_cuda", &dgcn::spmm_has_cuda);
  m.def("install_caching_cpu_allocator", &dgcn::install_caching_cpu_allocator, py::arg("max_cached_bytes"),
        "torch's CPU allocator keeps freed large blocks for reuse (models/cpu_allocator.h).");
  m.def("cpu_allocator_stats", [] {
    const dgcn::CpuAllocatorStats s = dgcn::cpu_allocator_stats();
    py::dict d;
    d["installed"] = s.installed;
    d["large_allocations"] = s.large_allocations;
    d["reused"] = s.reused;
    d["mapped_bytes"] = s.mapped_bytes;
    d["cached_bytes"] = s.cached_bytes;
    return d;
  });
  m.def(
      "aggregate_first",
      [](int64_t num_dst, int64_t num_src, int64_t nnz, int64_t in_features, int64_t out_features,
         bool training, bool input_requires_grad) {
        return dgcn::choose_aggregation_order(num_dst, num_src, nnz, in_features, out_features, training,
                                              input_requires_grad) == dgcn::AggregationOrder::kAggregateFirst;
      },
      "Whether a GCN layer should aggregate before transforming (models/gcn.h, Note [Aggregation order]).");

  m.def(
      "csr_positions",
      [](const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& src, const at::Tensor& dst,
         bool rows_sorted) {
        TORCH_CHECK_TYPE(rowptr.scalar_type() == at::kLong && src.scalar_type() == at::kLong &&
                             dst.scalar_type() == at::kLong,
                         "csr_positions: rowptr, src and dst must be int64");
        TORCH_CHECK_TYPE(col.scalar_type() == at::kInt || col.scalar_type() == at::kLong,
                         "csr_positions: col must be int32 or int64 (got ", col.scalar_type(), ")");
        const at::Tensor p = rowptr.cpu().contiguous(), c = col.cpu().contiguous();
        const at::Tensor u = src.cpu().contiguous().view(-1), v = dst.cpu().contiguous().view(-1);
        at::Tensor out = at::empty({v.numel()}, at::kLong);
        const auto span_of = [](const at::Tensor& t, auto* type) {
          using T = std::remove_pointer_t<decltype(type)>;
          return std::span<const T>(t.data_ptr<T>(), static_cast<size_t>(t.numel()));
        };
        py::gil_scoped_release release;
        dgcn::as_value_error([&] {
          const auto ptr = span_of(p, static_cast<int64_t*>(nullptr));
          const std::span<int64_t> o(out.data_ptr<int64_t>(), static_cast<size_t>(out.numel()));
          const auto us = span_of(u, static_cast<int64_t*>(nullptr)),
                     vs = span_of(v, static_cast<int64_t*>(nullptr));
          if (c.scalar_type() == at::kInt) {
            dgcn::csr_positions(ptr, span_of(c, static_cast<int32_t*>(nullptr)), us, vs, rows_sorted, o);
          } else {
            dgcn::csr_positions(ptr, span_of(c, static_cast<int64_t*>(nullptr)), us, vs, rows_sorted, o);
          }
        });
        return out;
      },
      py::arg("rowptr"), py::arg("col"), py::arg("src"), py::arg("dst"), py::arg("rows_sorted"),
      "Each edge src -> dst's position in the CSR (rowptr, col): sampling/edge_positions.h.");

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const c10::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what_without_backtrace());
    } catch (const c10::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what_without_backtrace());
    } catch (const c10::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what_without_backtrace());
    } catch (const c10::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
    }
  });

  py::class_<Store>(m, "Store")
      .def_static("open", &Store::open, py::arg("path"), py::arg("mmap") = false, py::arg("validate") = true,
                  py::arg("num_threads") = 0)
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

  m.def(
      "plan_epoch",
      [](const at::Tensor& nodes, uint64_t seed, int64_t epoch, int rank, int world_size, int64_t batch_size,
         bool shuffle, bool drop_last) {
        const dgcn::EpochPlan plan = dgcn::make_plan(dgcn::cpu_int64(nodes, "nodes"), seed, epoch, rank,
                                                     world_size, batch_size, shuffle, drop_last);
        std::vector<at::Tensor> batches;
        for (int64_t b = 0; b < plan.num_batches; ++b) {
          auto seeds = plan.batch(b);
          batches.push_back(at::tensor(std::vector<int64_t>(seeds.begin(), seeds.end()), at::kLong));
        }
        return batches;
      },
      py::arg("nodes"), py::arg("seed"), py::arg("epoch"), py::arg("rank"), py::arg("world_size"),
      py::arg("batch_size"), py::arg("shuffle") = true, py::arg("drop_last") = false,
      "One rank's batches of seeds for one epoch (sampling/seed_partition.h): equal counts on every rank.");

  py::class_<dgcn::Partition>(m, "Partition")
      .def(py::init<const std::string&, int, int, py::object, py::object, py::object, int>(), py::arg("dir"),
           py::arg("rank"), py::arg("world_size"), py::arg("exchange"), py::arg("sum"), py::arg("barrier"),
           py::arg("num_threads") = 0)
      .def_property_readonly("store", &dgcn::Partition::part)
      .def_property_readonly("num_nodes", &dgcn::Partition::num_nodes)
      .def_property_readonly("num_edges", &dgcn::Partition::num_edges)
      .def_property_readonly("parts", &dgcn::Partition::parts)
      .def_property_readonly("train_index", &dgcn::Partition::train_index);

  py::class_<Loader>(m, "Loader")
      .def(py::init<const Store&, std::vector<int64_t>, bool, int, int, bool>(), py::arg("store"),
           py::arg("fanouts"), py::arg("replace") = false, py::arg("num_workers") = 1,
           py::arg("queue_depth") = 4, py::arg("gather_features") = true, py::keep_alive<1, 2>())
      .def(py::init<const dgcn::Partition&, std::vector<int64_t>, bool, int, bool>(), py::arg("partition"),
           py::arg("fanouts"), py::arg("replace") = false, py::arg("queue_depth") = 4,
           py::arg("gather_features") = true, py::keep_alive<1, 2>())
      .def("start_epoch", &Loader::start_epoch, py::arg("nodes"), py::arg("seed"), py::arg("epoch"),
           py::arg("rank"), py::arg("world_size"), py::arg("batch_size"), py::arg("shuffle") = true,
           py::arg("drop_last") = false)
      .def("next", &Loader::next)
      .def("stats", &Loader::stats);
}
