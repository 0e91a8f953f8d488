// What python/src/module.cpp's bindings share: dgcn::Error as ValueError,
// store arrays as tensors without copying, node-id tensors checked.
// Included once, by python/src/module.cpp: dgcn._C's pybind11 objects stay
// one translation unit, as torch's and pybind11's headers cost ~8 s a unit
// here (Note [Build layout] in CMakeLists.txt); the files only split it by
// topic. Hence the unnamed namespace.
#pragma once

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <span>
#include <tuple>
#include <vector>

#include "base/buffer.h"
#include "base/error.h"
#include "graph/graph_store.h"

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

}  // namespace
}  // namespace dgcn
