// A streaming 64-bit digest (XXH3) for checksums of file sections and for
// "same bytes?" digests of batches and parameters printed by the apps.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <span>
#include <string>

#include <fmt/format.h>

namespace dgcn {

inline uint64_t hash_bytes(const void* data, size_t size) {
  return XXH3_64bits(data, size);
}

class Digest {
 public:
  Digest() { XXH3_64bits_reset(&state_); }
  void update(const void* data, size_t size) { XXH3_64bits_update(&state_, data, size); }
  template <class T>
  void update(std::span<const T> values) {
    update(values.data(), values.size_bytes());
  }
  template <class T>
  void update_value(const T& value) {
    update(&value, sizeof(T));
  }
  uint64_t value() const { return XXH3_64bits_digest(&state_); }
  std::string hex() const { return fmt::format("{:016x}", value()); }

 private:
  XXH3_state_t state_;
};

}  // namespace dgcn
