#include "distributed/buckets.h"

#include "base/error.h"

namespace dgcn {

std::vector<std::vector<int64_t>> assign_buckets(std::span<const int64_t> param_bytes, BucketCaps caps) {
  DGCN_CHECK(caps.first_bytes >= 1 && caps.bytes >= 1,
             "assign_buckets: caps must be at least 1 byte (got first {}, rest {})", caps.first_bytes,
             caps.bytes);
  std::vector<std::vector<int64_t>> buckets;
  std::vector<int64_t> current;
  int64_t current_bytes = 0;
  for (int64_t i = static_cast<int64_t>(param_bytes.size()) - 1; i >= 0; --i) {
    DGCN_CHECK(param_bytes[i] >= 0, "assign_buckets: parameter {} has negative size {}", i, param_bytes[i]);
    current.push_back(i);
    current_bytes += param_bytes[i];
    int64_t cap = buckets.empty() ? caps.first_bytes : caps.bytes;
    if (current_bytes >= cap) {
      buckets.push_back(std::move(current));
      current.clear();
      current_bytes = 0;
    }
  }
  if (!current.empty()) buckets.push_back(std::move(current));
  return buckets;
}

}  // namespace dgcn
