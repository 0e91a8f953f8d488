// The byte messages of the partitioned graph's exchanges: one buffer with a
// message per rank (Messages), and a reader that checks every read stays
// inside its message (MessageReader). Collectives::exchange moves them.
//
//   Messages send;                     // one buffer, a slice per destination rank
//   send.begin();
//   for (int q = 0; q < world_size; ++q) { send.append(q's bytes); send.end_message(); }
//   comm.exchange(send, received);     // received.of(q): what rank q sent here
//
// Buffers are reused across calls (their capacity kept): a products-scale
// batch moves ~100 MB of feature rows, and fresh memory costs a page fault
// per 4 KiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "base/error.h"

namespace dgcn {

// std::allocator that leaves new elements uninitialized (default-init)
// instead of zeroing them: a message buffer grown by resize() is written
// in full right after, and zeroing 100 MB per exchange would cost as much
// as the copy itself.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  explicit UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// One message per rank, back to back: rank q's is bytes[offsets[q], offsets[q+1]).
struct Messages {
  std::vector<std::byte, UninitializedAllocator<std::byte>> bytes;
  std::vector<int64_t> offsets{0};

  int count() const { return static_cast<int>(offsets.size()) - 1; }
  std::span<const std::byte> of(int q) const {
    return {bytes.data() + offsets[static_cast<size_t>(q)],
            static_cast<size_t>(offsets[static_cast<size_t>(q) + 1] - offsets[static_cast<size_t>(q)])};
  }
  int64_t size_of(int q) const {
    return offsets[static_cast<size_t>(q) + 1] - offsets[static_cast<size_t>(q)];
  }

  // Building: begin(), then for each rank in order append() its bytes and
  // end_message(). Within a message, put arrays of wider elements first
  // (int64, then float/int32, then bytes), so each starts aligned.
  void begin() {
    bytes.clear();
    offsets.assign(1, 0);
  }
  template <class T>
  void append(std::span<const T> values) {
    const size_t at = bytes.size();
    bytes.resize(at + values.size_bytes());
    if (!values.empty()) std::memcpy(bytes.data() + at, values.data(), values.size_bytes());
  }
  template <class T>
  void append_value(const T& value) {
    append(std::span<const T>(&value, 1));
  }
  // Pads the message to a multiple of 8 bytes, so every message starts
  // aligned for the int64 and float arrays it holds.
  void end_message() {
    bytes.resize((bytes.size() + 7) / 8 * 8, std::byte{0});
    offsets.push_back(static_cast<int64_t>(bytes.size()));
  }
};

// Reads a message front to back, checking that every read stays inside it:
// a malformed message (a bug, or a peer of another version) is a clear
// error, never a read past the buffer.
class MessageReader {
 public:
  MessageReader(std::span<const std::byte> bytes, const char* what) : bytes_(bytes), what_(what) {}
  template <class T>
  std::span<const T> take(size_t count) {
    const size_t need = count * sizeof(T);
    DGCN_CHECK(count <= bytes_.size() / sizeof(T) && need <= bytes_.size() - at_,
               "{}: a message of {} bytes ends before {} more bytes at offset {}", what_, bytes_.size(), need,
               at_);
    DGCN_ASSERT(reinterpret_cast<uintptr_t>(bytes_.data() + at_) % alignof(T) == 0);
    std::span<const T> out(reinterpret_cast<const T*>(bytes_.data() + at_), count);
    at_ += need;
    return out;
  }
  template <class T>
  T value() {
    T v;
    std::memcpy(&v, take<std::byte>(sizeof(T)).data(), sizeof(T));
    return v;
  }
  size_t left() const { return bytes_.size() - at_; }

 private:
  std::span<const std::byte> bytes_;
  const char* what_;
  size_t at_ = 0;
};

}  // namespace dgcn
