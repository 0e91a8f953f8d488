// dgcn._C.Loader (sampling/loader.h's NeighborLoader over a Store or a
// Partition: C++ worker threads sample and gather ahead of Python, which
// waits with the GIL released) and plan_epoch (sampling/seed_partition.h).
// Included once, by python/src/module.cpp: dgcn._C's pybind11 objects stay
// one translation unit, as torch's and pybind11's headers cost ~8 s a unit
// here (Note [Build layout] in CMakeLists.txt); the files only split it by
// topic. Hence the unnamed namespace.
#pragma once

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "graph/csr.h"
#include "models/cpu_allocator.h"
#include "python/src/bind_util.h"
#include "python/src/partition.h"
#include "python/src/store.h"
#include "sampling/batch_memory.h"
#include "sampling/block_edges.h"
#include "sampling/loader.h"
#include "sampling/node_facts.h"
#include "sampling/partitioned_sampler.h"
#include "sampling/seed_partition.h"

namespace dgcn {
namespace {

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

using PyBatch = std::tuple<at::Tensor, at::Tensor, at::Tensor, std::optional<at::Tensor>, at::Tensor, int64_t,
                           std::vector<int64_t>, std::vector<int64_t>, std::optional<at::Tensor>,
                           std::optional<at::Tensor>, std::optional<at::Tensor>, at::Tensor>;

// The loader of sampling/loader.h over a Store or a Partition, whose batches
// come out as tensors: (n_id, edge_index, colptr, x, deg, batch_size,
// num_sampled_nodes, num_sampled_edges, seed_labels, y, split_masks, input_id) with PyG's conventions
// (colptr [num + 1]: the block's own indptr, edge_index's CSC pointer, so
// that the layers need not sort the edges again)
// (python/dgcn/loader.py); seed_labels (int32, the seeds' classes) only from
// a partition, whose part holds no other node's label; y (int64 [num]) and
// split_masks (bool [3, num]: train, val, test) only after set_node_facts;
// input_id (int64 [batch_size]) the seeds' positions in the epoch's nodes.
class Loader {
 public:
  Loader(const Store& store, std::vector<int64_t> fanouts, bool replace, int num_workers, int queue_depth,
         bool gather_features)
      : store_(store.shared()),
        num_nodes_(store.num_nodes()),
        pool_(BatchMemoryPool::create(static_cast<size_t>(queue_depth) + 4, FreshPages::kPopulated)) {
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
        pool_(BatchMemoryPool::create(static_cast<size_t>(queue_depth) + 4, FreshPages::kPopulated)) {
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
    positions_ = std::move(plan.positions);  // the workers need only the seeds
    batch_size_ = plan.batch_size;
    next_batch_ = 0;
    py::gil_scoped_release release;
    loader_->start_epoch(std::move(plan));
    return num_batches;
  }

  // Every batch also carries y[n_id] and the split masks of n_id, gathered
  // with the degrees from `facts` (sampling/node_facts.h): one read a node.
  void set_node_facts(std::shared_ptr<const NodeFacts> facts) {
    TORCH_CHECK_VALUE(facts != nullptr, "Loader.set_node_facts: facts is None");
    TORCH_CHECK_VALUE(facts->num_nodes() == num_nodes_, "Loader.set_node_facts: facts of ",
                      facts->num_nodes(), " nodes for a graph of ", num_nodes_);
    TORCH_CHECK_VALUE(!producer_, "Loader.set_node_facts: a partition's loader has its seeds' labels only");
    facts_ = std::move(facts);
  }

  std::optional<PyBatch> next() {
    std::optional<LoadedBatch> batch;
    at::Tensor n_id, edge_index, colptr, deg;
    std::optional<at::Tensor> x, seed_labels, y, split_masks;
    at::Tensor input_id;
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
      // deg [num] int32 | y [num] int64 | split masks [3, num] bool, in one
      // reused buffer (Note [Index memory]), viewed as 8-byte words.
      const bool with_labels = facts_ != nullptr;
      const int64_t words =
          num + 2 * m + (num + 1) + (num + 1) / 2 + (with_labels ? num + (3 * num + 7) / 8 : 0);
      const IndexMemory memory = index_memory(words);
      int64_t* base = memory.words;
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
      int64_t* labels = ptr + num + 1 + (num + 1) / 2;
      auto* masks = reinterpret_cast<bool*>(labels + num);
      if (with_labels) {  // never a partition's (set_node_facts)
        facts_->gather(s.n_id, {degree, static_cast<size_t>(num)}, {labels, static_cast<size_t>(num)},
                       {masks, static_cast<size_t>(NodeFacts::kNumSplits * num)});
      } else if (!s.degrees.empty()) {  // a partition's: fetched from the owners
        std::copy(s.degrees.begin(), s.degrees.end(), degree);
      } else {
        const auto degrees = store_->degrees();
        for (int64_t i = 0; i < num; ++i) degree[i] = degrees[s.n_id[i]];
      }
      n_id = leased(base, {num}, at::kLong, memory.lease);
      edge_index = leased(src, {2, m}, at::kLong, memory.lease);
      colptr = leased(ptr, {num + 1}, at::kLong, memory.lease);
      deg = leased(degree, {num}, at::kInt, memory.lease);
      if (with_labels) {
        y = leased(labels, {num}, at::kLong, memory.lease);
        split_masks = leased(masks, {3, num}, at::kBool, memory.lease);
      }
      if (gather_features_) {
        x = leased(batch->features.data(), {num, store_->num_features}, at::kFloat, batch->lease);
      }
      num_seeds = s.num_seeds;
      // Batches come in plan order: batch b's seeds are seeds[b * batch_size, ...).
      const int64_t first = next_batch_++ * batch_size_;
      TORCH_INTERNAL_ASSERT(first + num_seeds <= static_cast<int64_t>(positions_.size()));
      input_id = at::empty({num_seeds}, at::kLong);
      std::copy_n(positions_.begin() + first, num_seeds, input_id.data_ptr<int64_t>());
      if (producer_ && store_->task == Task::kSingleLabel) {
        seed_labels = at::empty({num_seeds}, at::kInt);
        std::memcpy(seed_labels->data_ptr(), batch->labels.data(), static_cast<size_t>(num_seeds) * 4);
      }
      nodes = s.num_nodes_per_hop;
      edges = s.num_edges_per_hop;
      batch->lease.reset();
      loader_->recycle(std::move(*batch));
    }
    return PyBatch{n_id,        edge_index, colptr,           x,
                   deg,         num_seeds,  std::move(nodes), std::move(edges),
                   seed_labels, y,          split_masks,      input_id};
  }

  py::dict stats() const {
    const LoaderStats s = loader_->stats();
    py::dict d;
    d["consumer_wait_s"] = s.consumer_wait_s;
    d["worker_blocked_s"] = s.worker_blocked_s;
    d["worker_busy_s"] = s.worker_busy_s;
    d["batches"] = s.batches;
    d["peak_in_flight"] = s.peak_in_flight;
    // Fresh buffers of the feature rows (the loader's pool) and of the index arrays (pool_).
    d["feature_buffers_created"] = s.buffers_created;
    d["index_buffers_created"] = static_cast<int64_t>(pool_->buffers_created());
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

  // Note [Index memory]
  // A products batch's index arrays are ~27 MB, and fresh memory costs a page
  // fault per 4 KiB (sampling/batch_memory.h), so they are written into
  // memory reused from earlier batches. Where dgcn's CPU cache is torch's
  // allocator (dgcn.enable_cpu_cache, as the example and dgcn-train run),
  // they take it from the cache like any tensor: its free blocks include
  // what setup freed (the labels NeighborLoader converted for NodeFacts),
  // pages the process already has, which a pool of its own would leave idle
  // while it mapped new ones in the first epoch. Else from pool_.
  struct IndexMemory {
    int64_t* words;
    std::shared_ptr<void> lease;  // keeps `words` alive
  };
  IndexMemory index_memory(int64_t words) {
    if (caching_cpu_allocator_installed()) {
      auto t = std::make_shared<at::Tensor>(at::empty({words}, at::kLong));
      return {t->data_ptr<int64_t>(), std::move(t)};
    }
    const BatchMemory memory = pool_->acquire(words, 2, 0, 0);
    return {reinterpret_cast<int64_t*>(memory.features.data()), memory.lease};
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
  // Memory of the batches' index arrays without dgcn's CPU cache (Note
  // [Index memory]), reused once Python drops a batch's tensors; new buffers
  // are populated 4 KiB pages (Note [Populated batch pages] in
  // sampling/batch_memory.cpp), as the consumer makes them between its
  // forwards.
  std::shared_ptr<BatchMemoryPool> pool_;
  bool gather_features_ = false;
  std::shared_ptr<const NodeFacts> facts_;  // set_node_facts's, or null
  // The epoch's EpochPlan::positions, and the batch next() hands out next.
  std::vector<int64_t> positions_;
  int64_t batch_size_ = 1;
  int64_t next_batch_ = 0;
};

void bind_loader(py::module_& m) {
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

  py::class_<NodeFacts, std::shared_ptr<NodeFacts>>(
      m, "NodeFacts", "A store's degrees with the nodes' classes and split bits (sampling/node_facts.h).")
      .def(py::init([](const Store& store, const at::Tensor& labels, const at::Tensor& split_bits) {
             const int64_t n = store.num_nodes();
             TORCH_CHECK_VALUE(labels.device().is_cpu() && labels.scalar_type() == at::kInt &&
                                   labels.dim() == 1 && labels.numel() == n,
                               "NodeFacts: labels must be a CPU int32 tensor [", n, "] (got ",
                               labels.scalar_type(), " ", labels.sizes(), ")");
             TORCH_CHECK_VALUE(split_bits.device().is_cpu() && split_bits.scalar_type() == at::kByte &&
                                   split_bits.dim() == 1 && split_bits.numel() == n,
                               "NodeFacts: split_bits must be a CPU uint8 tensor [", n, "] (got ",
                               split_bits.scalar_type(), " ", split_bits.sizes(), ")");
             const at::Tensor classes = labels.contiguous();
             const at::Tensor bits = split_bits.contiguous();
             as_value_error([&] { require_whole_graph(store.shared()->graph, "NodeFacts"); });
             py::gil_scoped_release release;
             return as_value_error([&] {
               return std::make_shared<NodeFacts>(
                   store.shared()->degrees(), std::span(classes.data_ptr<int32_t>(), static_cast<size_t>(n)),
                   std::span(bits.data_ptr<uint8_t>(), static_cast<size_t>(n)));
             });
           }),
           py::arg("store"), py::arg("labels"), py::arg("split_bits"))
      .def_readonly_static("max_class", &NodeFacts::kMaxClass);

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
      .def("set_node_facts", &Loader::set_node_facts, py::arg("facts"))
      .def("next", &Loader::next)
      .def("stats", &Loader::stats);
}

}  // namespace
}  // namespace dgcn
