// dgcn._C: the stateful objects of the `dgcn` Python package, over pybind11
// with torch's tensor casters (docs/design.md, "python/"):
//   Store       an open `.gcn` store (graph/store_format.h) or one built from
//               tensors (a PyG Data); its arrays as tensors without copying
//   Loader      sampling/loader.h's NeighborLoader: C++ worker threads sample
//               and gather ahead of Python, which waits with the GIL released
//   plan_epoch  sampling/seed_partition.h: one rank's seeds for one epoch
// dgcn::Error from argument checks becomes ValueError, from data or files
// RuntimeError; c10::Error its Python type. The Python side is python/dgcn/.
//
// The objects live by topic in python/src/store.h, partition.h, loader.h
// (one translation unit: see there); this file registers them and the free
// functions.
#include <ATen/ATen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdint>
#include <exception>
#include <span>
#include <type_traits>

#include "base/version.h"
#include "models/cpu_allocator.h"
#include "models/gcn.h"
#include "models/spmm.h"
#include "python/src/bind_util.h"
#include "python/src/loader.h"
#include "python/src/partition.h"
#include "python/src/store.h"
#include "sampling/edge_positions.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
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
    d["grown"] = s.grown;
    d["mapped_bytes"] = s.mapped_bytes;
    d["peak_mapped_bytes"] = s.peak_mapped_bytes;
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

  // In this order: a class is registered before a signature names it.
  dgcn::bind_store(m);
  dgcn::bind_partition(m);
  dgcn::bind_loader(m);
}
