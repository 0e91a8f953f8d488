#include "train/compute_features.h"

#include <sys/mman.h>
#include <unistd.h>

#include <torch/torch.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>

#include "base/error.h"

namespace dgcn {
namespace {

// Whether [p, p + bytes) lies inside one mapping of a file that this
// process cannot write (Note [Feature pages after conversion]).
bool in_read_only_file_mapping(const void* p, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = begin + bytes;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode [path]
    uintptr_t lo = 0, hi = 0;
    char perms[8] = {};
    char dev[32] = {};
    unsigned long long offset = 0, inode = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %7s %llx %31s %llu", &lo, &hi, perms, &offset,
                    dev, &inode) != 6)
      continue;
    if (begin >= lo && end <= hi) return inode != 0 && perms[0] == 'r' && perms[1] == '-';
  }
  return false;
}

// Drops the whole pages of [p, p + bytes) from the resident set.
void release_pages(const std::byte* p, size_t bytes) {
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);  // a hint: RSS only
}

}  // namespace

at::Tensor compute_features(const Buffer& features, int64_t rows, int64_t cols, at::ScalarType dtype,
                            bool release_source, bool* released, int64_t chunk_bytes) {
  DGCN_CHECK(rows >= 0 && cols >= 0 &&
                 features.size() == static_cast<size_t>(rows) * static_cast<size_t>(cols) * sizeof(float),
             "features: {} bytes are not [{} x {}] float32", features.size(), rows, cols);
  DGCN_CHECK(dtype == at::kFloat || dtype == at::kBFloat16, "features: no {} copy (float32 or bfloat16)",
             c10::toString(dtype));
  if (released != nullptr) *released = false;
  const at::Tensor src = torch::from_blob(const_cast<float*>(features.as<float>().data()), {rows, cols},
                                          at::TensorOptions().dtype(at::kFloat));
  if (dtype == at::kFloat) return src;
  at::Tensor out = at::empty({rows, cols}, at::TensorOptions().dtype(dtype));
  const bool release =
      release_source && !features.empty() && in_read_only_file_mapping(features.data(), features.size());
  // A chunk of rows at a time: the pages read and not yet released stay few.
  const int64_t row_bytes = std::max<int64_t>(1, cols) * static_cast<int64_t>(sizeof(float));
  const int64_t chunk = std::max<int64_t>(1, chunk_bytes / row_bytes);
  for (int64_t begin = 0; begin < rows; begin += chunk) {
    const int64_t len = std::min(chunk, rows - begin);
    out.narrow(0, begin, len).copy_(src.narrow(0, begin, len));
    if (release) {
      release_pages(features.data() + begin * row_bytes, static_cast<size_t>(len * row_bytes));
    }
  }
  if (released != nullptr) *released = release;
  return out;
}

}  // namespace dgcn
