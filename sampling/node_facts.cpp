#include "sampling/node_facts.h"

#include <algorithm>
#include <bit>

#include "base/error.h"
#include "sampling/batch_memory.h"

namespace dgcn {
namespace {

template <class Entry>
void pack(std::span<const int32_t> degrees, std::span<const int32_t> classes,
          std::span<const uint8_t> split_bits, int class_bits, Entry* entries) {
  const int degree_shift = class_bits + NodeFacts::kNumSplits;
  for (size_t v = 0; v < degrees.size(); ++v) {
    entries[v] = static_cast<Entry>(degrees[v]) << degree_shift |
                 static_cast<Entry>(classes[v] + 1) << NodeFacts::kNumSplits | split_bits[v];
  }
}

// Two passes over chunks of nodes: the random reads alone into a local
// array, then a sequential pass that unpacks them. In one loop the byte
// stores of the masks may alias everything, so the compiler kept each read
// behind the previous node's stores: 7 ms a products batch against 1.5 ms
// (a microbenchmark over a real batch's n_id).
template <class Entry>
void gather_and_unpack(const Entry* entries, int class_bits, std::span<const int64_t> n_id, int32_t* degree,
                       int64_t* y, bool* masks) {
  constexpr size_t kChunk = 1024;
  const size_t num = n_id.size();
  const int degree_shift = class_bits + NodeFacts::kNumSplits;
  const Entry class_mask = (Entry{1} << class_bits) - 1;
  Entry chunk[kChunk];
  for (size_t begin = 0; begin < num; begin += kChunk) {
    const size_t size = std::min(kChunk, num - begin);
    for (size_t i = 0; i < size; ++i) chunk[i] = entries[n_id[begin + i]];
    for (size_t i = 0; i < size; ++i) {
      const Entry e = chunk[i];
      const size_t j = begin + i;
      degree[j] = static_cast<int32_t>(e >> degree_shift);
      y[j] = static_cast<int64_t>((e >> NodeFacts::kNumSplits) & class_mask) - 1;
      masks[j] = (e & 1) != 0;            // train
      masks[num + j] = (e & 2) != 0;      // val
      masks[2 * num + j] = (e & 4) != 0;  // test
    }
  }
}

}  // namespace

NodeFacts::NodeFacts(std::span<const int32_t> degrees, std::span<const int32_t> classes,
                     std::span<const uint8_t> split_bits)
    : num_nodes_(static_cast<int64_t>(degrees.size())) {
  DGCN_CHECK(classes.size() == degrees.size() && split_bits.size() == degrees.size(),
             "NodeFacts: {} degrees, {} classes and {} split bits (one each a node)", degrees.size(),
             classes.size(), split_bits.size());
  int32_t max_degree = 0;
  int32_t max_class = -1;
  for (size_t v = 0; v < degrees.size(); ++v) {
    DGCN_CHECK(degrees[v] >= 0, "NodeFacts: node {} has degree {}", v, degrees[v]);
    DGCN_CHECK(classes[v] >= -1 && classes[v] <= kMaxClass,
               "NodeFacts: node {} has class {}, outside [-1, {}]", v, classes[v], kMaxClass);
    DGCN_CHECK(split_bits[v] < (1u << kNumSplits), "NodeFacts: node {} has split bits {}, above {}", v,
               split_bits[v], (1u << kNumSplits) - 1);
    max_degree = std::max(max_degree, degrees[v]);
    max_class = std::max(max_class, classes[v]);
  }
  class_bits_ = std::bit_width(static_cast<uint32_t>(max_class + 1));
  // At most 31 bits in 4 bytes, so the degree's shift stays below 32.
  wide_ = kNumSplits + class_bits_ + std::bit_width(static_cast<uint32_t>(max_degree)) > 31;
  entries_ = allocate_huge_page_buffer(degrees.size() * entry_bytes());
  if (wide_) {
    pack(degrees, classes, split_bits, class_bits_, reinterpret_cast<uint64_t*>(entries_.data()));
  } else {
    pack(degrees, classes, split_bits, class_bits_, reinterpret_cast<uint32_t*>(entries_.data()));
  }
}

void NodeFacts::gather(std::span<const int64_t> n_id, std::span<int32_t> degree, std::span<int64_t> y,
                       std::span<bool> masks) const {
  const size_t num = n_id.size();
  DGCN_CHECK(
      degree.size() == num && y.size() == num && masks.size() == kNumSplits * num,
      "NodeFacts::gather: {} degrees, {} labels and {} mask entries for {} nodes (expected {}, {}, {})",
      degree.size(), y.size(), masks.size(), num, num, num, kNumSplits * num);
  if (wide_) {
    gather_and_unpack(reinterpret_cast<const uint64_t*>(entries_.data()), class_bits_, n_id, degree.data(),
                      y.data(), masks.data());
  } else {
    gather_and_unpack(reinterpret_cast<const uint32_t*>(entries_.data()), class_bits_, n_id, degree.data(),
                      y.data(), masks.data());
  }
}

}  // namespace dgcn
