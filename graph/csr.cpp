#include "graph/csr.h"

#include <atomic>

#include "base/parallel.h"

namespace dgcn {

namespace {

template <class Id>
void check_indices_in_range(std::span<const Id> indices, int64_t num_nodes, const std::string& what) {
  // Find the first bad entry per chunk, then report the smallest position so
  // the message does not depend on the thread count.
  std::atomic<int64_t> first_bad{INT64_MAX};
  parallel_for_chunks(static_cast<int64_t>(indices.size()), int64_t{1} << 20, default_num_threads(),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t e = begin; e < end; ++e) {
                          int64_t v = indices[e];
                          if (v < 0 || v >= num_nodes) {
                            int64_t cur = first_bad.load();
                            while (e < cur && !first_bad.compare_exchange_weak(cur, e)) {
                            }
                            return;
                          }
                        }
                      });
  int64_t e = first_bad.load();
  DGCN_CHECK(e == INT64_MAX, "{}: indices[{}] = {} is not a node id in [0, {})", what, e,
             static_cast<int64_t>(indices[e]), num_nodes);
}

}  // namespace

Csr::Csr(int64_t num_nodes, Buffer indptr, Buffer indices, IdWidth width, const std::string& what)
    : Csr(num_nodes, num_nodes, std::move(indptr), std::move(indices), width, what) {}

Csr::Csr(int64_t num_rows, int64_t num_cols, Buffer indptr, Buffer indices, IdWidth width,
         const std::string& what)
    : num_nodes_(num_rows),
      num_cols_(num_cols),
      width_(width),
      indptr_(std::move(indptr)),
      indices_(std::move(indices)) {
  DGCN_CHECK(num_rows >= 0 && num_cols >= num_rows,
             "{}: {} rows over {} columns (nodes); expected 0 <= rows <= columns", what, num_rows, num_cols);
  DGCN_CHECK(width == IdWidth::k64 || num_cols <= INT32_MAX, "{}: {} nodes do not fit 32-bit indices", what,
             num_cols);
  DGCN_CHECK(indptr_.size() == static_cast<size_t>(num_rows + 1) * sizeof(int64_t),
             "{}: indptr has {} bytes, expected {} (num_nodes + 1 = {} int64 values)", what, indptr_.size(),
             (num_rows + 1) * sizeof(int64_t), num_rows + 1);
  DGCN_CHECK(indices_.size() % static_cast<size_t>(width) == 0,
             "{}: indices has {} bytes, not a multiple of the {}-byte id width", what, indices_.size(),
             static_cast<int>(width));
  auto p = indptr_.as<int64_t>();
  num_edges_ = static_cast<int64_t>(indices_.size() / static_cast<size_t>(width));
  DGCN_CHECK(p[0] == 0, "{}: indptr[0] = {}, expected 0", what, p[0]);
  DGCN_CHECK(p[num_rows] == num_edges_, "{}: indptr[{}] = {} but there are {} indices", what, num_rows,
             p[num_rows], num_edges_);
  for (int64_t v = 0; v < num_rows; ++v) {
    DGCN_CHECK(p[v] <= p[v + 1], "{}: indptr is not monotone: indptr[{}] = {} > indptr[{}] = {}", what, v,
               p[v], v + 1, p[v + 1]);
  }
  visit_indices([&](auto ids) { check_indices_in_range(ids, num_cols, what); });
}

}  // namespace dgcn
