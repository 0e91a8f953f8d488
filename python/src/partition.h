// dgcn._C.Partition: this rank's part of a partitioned graph, opened with
// every rank together over the user's torch.distributed (dgcn.data.open_partition).
// Included once, by python/src/module.cpp: dgcn._C's pybind11 objects stay
// one translation unit, as torch's and pybind11's headers cost ~8 s a unit
// here (Note [Build layout] in CMakeLists.txt); the files only split it by
// topic. Hence the unnamed namespace.
#pragma once

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "partition/collectives.h"
#include "partition/part_loading.h"
#include "partition/part_map.h"
#include "python/src/bind_util.h"
#include "python/src/store.h"

namespace dgcn {
namespace {

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

void bind_partition(py::module_& m) {
  py::class_<dgcn::Partition>(m, "Partition")
      .def(py::init<const std::string&, int, int, py::object, py::object, py::object, int>(), py::arg("dir"),
           py::arg("rank"), py::arg("world_size"), py::arg("exchange"), py::arg("sum"), py::arg("barrier"),
           py::arg("num_threads") = 0)
      .def_property_readonly("store", &dgcn::Partition::part)
      .def_property_readonly("num_nodes", &dgcn::Partition::num_nodes)
      .def_property_readonly("num_edges", &dgcn::Partition::num_edges)
      .def_property_readonly("parts", &dgcn::Partition::parts)
      .def_property_readonly("train_index", &dgcn::Partition::train_index);
}

}  // namespace
}  // namespace dgcn
