// Which gradients are all-reduced together: the pure bucket-assignment
// function the DDP module (distributed/ddp.h) uses, tested on its own.
//
// Gradients become ready roughly in reverse registration order during
// backward (the last layer's first), so buckets are filled from the last
// parameter backwards. A bucket closes as soon as its bytes reach its cap, so
// it may overshoot the cap by one parameter, and a parameter larger than the
// cap gets a bucket of its own. The first bucket is small so that the first
// all-reduce starts early in backward; later buckets are large so that each
// all-reduce moves enough bytes to run near link speed (c10d's choice too).
//
// Example, parameter sizes [400, 100, 300, 200] bytes (registration order),
// caps first = 250, rest = 500:
//   walk 3 (200 B) -> bucket 0 = {3}: 200 < 250, add 2 (300 B) -> 500 >= 250, close
//   bucket 1 = {1, 0}: 100 + 400 = 500 >= 500, close
//   result: [[3, 2], [1, 0]]
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace dgcn {

inline constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;  // 1 MiB
inline constexpr int64_t kBucketBytes = int64_t{25} << 20;      // 25 MiB

struct BucketCaps {
  int64_t first_bytes = kFirstBucketBytes;
  int64_t bytes = kBucketBytes;
};

// Buckets of parameter indices (into `param_bytes`, registration order), in
// launch order. Every index appears exactly once; within a bucket indices
// are in reverse registration order. Throws dgcn::Error on a negative size or
// a cap < 1.
std::vector<std::vector<int64_t>> assign_buckets(std::span<const int64_t> param_bytes, BucketCaps caps = {});

}  // namespace dgcn
