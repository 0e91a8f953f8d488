// A contiguous byte region plus whatever keeps it alive: an owned allocation,
// a memory mapping, or a slice of another Buffer. Every array of a GraphStore
// is a Buffer, so a store can be built in memory or mapped from a file
// without copies, and copies of a Buffer share (never duplicate) the bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace dgcn {

class MutableBuffer;

// Read-only bytes: what a GraphStore holds, what a mapping gives. Nothing can
// write through a Buffer; code that fills bytes holds a MutableBuffer (below)
// and hands it on as a Buffer when it is done.
class Buffer {
 public:
  Buffer() = default;

  // An owned, 64-byte aligned allocation of `bytes` bytes, uninitialized.
  static MutableBuffer allocate(size_t bytes);
  // An owned allocation holding `count` value-initialized elements of T.
  template <class T>
  static MutableBuffer zeros(size_t count);
  // Takes over a vector's storage (no copy).
  template <class T>
  static MutableBuffer from_vector(std::vector<T>&& v);
  // Copies `values` into a new owned buffer.
  template <class T>
  static MutableBuffer copy_of(std::span<const T> values);
  // Views read-only memory kept alive by `owner` (e.g. a mapping).
  static Buffer wrap(std::shared_ptr<const void> owner, const void* data, size_t bytes);

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Typed views. The size must be a multiple of sizeof(T) and the data aligned for T.
  template <class T>
  std::span<const T> as() const {
    check_view(sizeof(T), alignof(T));
    return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)};
  }

  // A sub-range sharing this buffer's owner.
  Buffer slice(size_t offset, size_t bytes) const;

 protected:
  Buffer(std::shared_ptr<const void> owner, const std::byte* data, size_t bytes)
      : owner_(std::move(owner)), data_(data), size_(bytes) {}
  void check_view(size_t elem_size, size_t align) const;

 private:
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Bytes this code may write: a fresh allocation, an adopted vector, memory
// wrapped as writable. It is a Buffer (pass it wherever one is read; the
// bytes are shared, not copied), but a Buffer never becomes one again, so a
// mapped file's pages cannot be written by mistake. Like std::span, a const
// MutableBuffer still writes its bytes: constness is the handle's, not the data's.
class MutableBuffer : public Buffer {
 public:
  MutableBuffer() = default;
  // Views writable memory kept alive by `owner`.
  static MutableBuffer wrap(std::shared_ptr<void> owner, void* data, size_t bytes) {
    return MutableBuffer(std::move(owner), static_cast<std::byte*>(data), bytes);
  }

  std::byte* data() const { return data_; }
  template <class T>
  std::span<T> as_mutable() const {
    check_view(sizeof(T), alignof(T));
    return {reinterpret_cast<T*>(data_), size() / sizeof(T)};
  }

 private:
  friend class Buffer;
  MutableBuffer(std::shared_ptr<void> owner, std::byte* data, size_t bytes)
      : Buffer(std::move(owner), data, bytes), data_(data) {}

  std::byte* data_ = nullptr;
};

template <class T>
MutableBuffer Buffer::zeros(size_t count) {
  MutableBuffer b = allocate(count * sizeof(T));
  std::fill_n(b.data(), b.size(), std::byte{0});
  return b;
}

template <class T>
MutableBuffer Buffer::from_vector(std::vector<T>&& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  auto holder = std::make_shared<std::vector<T>>(std::move(v));
  return MutableBuffer(holder, reinterpret_cast<std::byte*>(holder->data()), holder->size() * sizeof(T));
}

template <class T>
MutableBuffer Buffer::copy_of(std::span<const T> values) {
  static_assert(std::is_trivially_copyable_v<T>);
  MutableBuffer b = allocate(values.size_bytes());
  if (!values.empty()) std::memcpy(b.data(), values.data(), values.size_bytes());
  return b;
}

// This machine's physical memory in bytes (sysconf): the bound a reader
// checks a size claimed by a file against when the file's own bytes cannot
// bound it (a sparse matrix made dense).
uint64_t physical_memory_bytes();

}  // namespace dgcn
