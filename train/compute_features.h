// The feature matrix a run computes on (Note [Mixed precision] in
// models/gcn.h): the store's float32 rows as they are, or a bfloat16 copy.
//
//   at::Tensor x = compute_features(store.features, store.num_nodes(), store.num_features,
//                                   at::kBFloat16, /*release_source=*/true);
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstdint>

#include "base/buffer.h"

namespace dgcn {

// Note [Feature pages after conversion]
// A bf16 run reads only its bf16 copy of the features, yet the float32 rows
// it was converted from stay mapped: the store is a read-only file mapping,
// and every page the conversion (and the load's digest) touched stays in the
// process's resident set, so RSS did not fall with the feature bytes. With
// release_source, the conversion runs in chunks of rows and, after each
// chunk, drops the float32 pages it read from this process (MADV_DONTNEED).
// That is safe only on a read-only file mapping (its pages come back from
// the file, unchanged, if anything reads them again; on anonymous memory the
// call would zero them), so it is done only when /proc/self/maps says the
// rows lie in one; otherwise nothing is released. The page cache keeps the
// file, so the next run's load is not slowed.

// `features` holds [rows x cols] float32. dtype float32: a view of its bytes
// (no copy; the caller keeps `features` alive). bfloat16: a new tensor,
// rounded to nearest even (the same bits as Tensor::to), and with
// release_source the float32 pages released as above, converting about
// `chunk_bytes` of float32 rows at a time (at least one row). Says whether it
// released them in `released` (when not null).
at::Tensor compute_features(const Buffer& features, int64_t rows, int64_t cols, at::ScalarType dtype,
                            bool release_source, bool* released = nullptr,
                            int64_t chunk_bytes = int64_t{64} << 20);

}  // namespace dgcn
