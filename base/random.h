// Counter-based randomness for sampling, shuffling and synthetic graphs. Every random stream is
// a pure function of a key built from coordinates (seed, epoch, batch, hop,
// chunk, ...), never of the thread that consumes it, so results do not depend
// on the thread count; and no generator is shared, so nothing is locked.
//
//   uint64_t key = stream_key(seed, {epoch, batch, hop, chunk});
//   Rng rng(key);
//   uint64_t pick = rng.below(degree);   // exactly uniform in [0, degree)
#pragma once

#include <cstdint>
#include <initializer_list>

namespace dgcn {

// SplitMix64's finalizer: a bijection on 64-bit words with full avalanche.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Folds one coordinate into a key. For a fixed key, distinct coordinates give
// distinct keys (mix64 is a bijection); order matters: (a, b) != (b, a).
constexpr uint64_t derive_key(uint64_t key, uint64_t coordinate) {
  return mix64(key ^ mix64(coordinate + 0x9e3779b97f4a7c15ULL));
}

constexpr uint64_t stream_key(uint64_t seed, std::initializer_list<uint64_t> coordinates) {
  uint64_t key = mix64(seed);
  for (uint64_t c : coordinates) key = derive_key(key, c);
  return key;
}

// SplitMix64 (Steele, Lea, Flood 2014): one add and two multiplies per draw,
// passes BigCrush; streams start at key-derived points of a 2^64 cycle, so two
// streams of realistic length overlap with negligible probability.
class Rng {
 public:
  explicit constexpr Rng(uint64_t key) : state_(key) {}

  constexpr uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }

  // Exactly uniform in [0, n) for n >= 1 (Lemire 2019, "Fast random integer
  // generation in an interval": one multiply, a division only on rejection).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) [[unlikely]] {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace dgcn
