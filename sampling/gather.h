// Row gathers for the loader: dst row i = src row ids[i]. The feature gather
// of a products-scale batch moves ~250 MB of random 400-byte rows, more bytes
// than the sampler touches, so it prefetches rows ahead and writes with
// streaming stores (no read-for-ownership of destination lines that are
// handed to the device, not read back by this core).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace dgcn {

// dst[i * cols .. (i+1) * cols) = src[ids[i] * cols ..), for float rows.
// `ids` must be valid rows of src (the caller checked them). Splits the rows
// over `threads` threads.
void gather_float_rows(const float* src, int64_t cols, std::span<const int64_t> ids, float* dst, int threads);

// The same for rows of `row_bytes` bytes (labels).
void gather_byte_rows(const std::byte* src, int64_t row_bytes, std::span<const int64_t> ids, std::byte* dst);

}  // namespace dgcn
