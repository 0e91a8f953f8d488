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

class Buffer {
 public:
  Buffer() = default;

  // An owned, 64-byte aligned allocation of `bytes` bytes, uninitialized.
  static Buffer allocate(size_t bytes);
  // An owned allocation holding `count` value-initialized elements of T.
  template <class T>
  static Buffer zeros(size_t count) {
    Buffer b = allocate(count * sizeof(T));
    std::fill_n(const_cast<std::byte*>(b.data_), b.size_, std::byte{0});
    return b;
  }
  // Takes over a vector's storage (no copy).
  template <class T>
  static Buffer from_vector(std::vector<T>&& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    auto holder = std::make_shared<std::vector<T>>(std::move(v));
    return Buffer(holder, holder->data(), holder->size() * sizeof(T));
  }
  // Copies `values` into a new owned buffer.
  template <class T>
  static Buffer copy_of(std::span<const T> values) {
    Buffer b = allocate(values.size_bytes());
    if (!values.empty()) std::memcpy(b.data_, values.data(), values.size_bytes());
    return b;
  }
  // Views memory kept alive by `owner` (e.g. a mapping). `writable` says
  // whether mutable access is allowed.
  static Buffer wrap(std::shared_ptr<const void> owner, const void* data, size_t bytes,
                     bool writable = false);

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool writable() const { return writable_; }

  // Typed views. The size must be a multiple of sizeof(T) and the data aligned for T.
  template <class T>
  std::span<const T> as() const {
    check_view(sizeof(T), alignof(T));
    return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)};
  }
  template <class T>
  std::span<T> as_mutable() {
    DGCN_CHECK(writable_ || size_ == 0, "buffer: mutable view of a read-only (mapped) buffer");
    check_view(sizeof(T), alignof(T));
    return {reinterpret_cast<T*>(const_cast<std::byte*>(data_)), size_ / sizeof(T)};
  }

  // A sub-range sharing this buffer's owner.
  Buffer slice(size_t offset, size_t bytes) const;

 private:
  Buffer(std::shared_ptr<const void> owner, const void* data, size_t bytes, bool writable = true)
      : owner_(std::move(owner)),
        data_(static_cast<const std::byte*>(data)),
        size_(bytes),
        writable_(writable) {}
  void check_view(size_t elem_size, size_t align) const;

  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool writable_ = true;
};

// This machine's physical memory in bytes (sysconf): the bound a reader
// checks a size claimed by a file against when the file's own bytes cannot
// bound it (a sparse matrix made dense).
uint64_t physical_memory_bytes();

}  // namespace dgcn
