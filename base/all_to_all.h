// The one collective a partitioned graph needs: every rank sends a message
// to every rank (itself included) and receives one from each. Torch-free, so
// the partitioned sampler (sampling/) can use it; distributed/all_to_all.h
// implements it over c10d (Gloo, NCCL), tests implement it in-process.
//
//   Messages send;                     // one buffer, a slice per destination rank
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
#include <string>
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

class AllToAll {
 public:
  virtual ~AllToAll() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: every rank calls it, the same number of times in the same
  // order. send.count() == size(); `received` is overwritten with one message
  // from each rank (received.of(q) is what rank q sent to this one). Throws
  // dgcn::Error when the collective fails or times out (naming the peer
  // where known).
  virtual void exchange(const Messages& send, Messages& received) = 0;
};

// Collective: every rank's `values`, in rank order (out[q] is rank q's).
template <class T>
std::vector<std::vector<T>> all_gather(AllToAll& comm, std::span<const T> values) {
  Messages send;
  for (int q = 0; q < comm.size(); ++q) {
    send.append_value<int64_t>(static_cast<int64_t>(values.size()));
    send.append(values);
    send.end_message();
  }
  Messages received;
  comm.exchange(send, received);
  std::vector<std::vector<T>> out;
  for (int q = 0; q < comm.size(); ++q) {
    MessageReader r(received.of(q), "all_gather");
    const auto n = r.value<int64_t>();
    DGCN_CHECK(n >= 0, "all_gather: rank {} sent {} values", q, n);
    const auto got = r.take<T>(static_cast<size_t>(n));
    out.emplace_back(got.begin(), got.end());
  }
  return out;
}

// Collective: every rank's `text`, in rank order; e.g. each rank's error
// while loading its part, so that every rank stops naming all of them.
inline std::vector<std::string> all_gather_text(AllToAll& comm, const std::string& text) {
  std::vector<std::string> out;
  for (const auto& chars : all_gather(comm, std::span<const char>(text)))
    out.emplace_back(chars.begin(), chars.end());
  return out;
}

}  // namespace dgcn
