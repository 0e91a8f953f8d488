#include "base/buffer.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace dgcn {

namespace {
constexpr size_t kAlignment = 64;

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
}  // namespace

MutableBuffer Buffer::allocate(size_t bytes) {
  if (bytes == 0) return MutableBuffer();
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    throw Error(fmt::format("buffer: cannot allocate {} bytes", bytes));
  }
  std::shared_ptr<void> owner(p, AlignedFree{});
  return MutableBuffer::wrap(std::move(owner), p, bytes);
}

Buffer Buffer::wrap(std::shared_ptr<const void> owner, const void* data, size_t bytes) {
  return Buffer(std::move(owner), static_cast<const std::byte*>(data), bytes);
}

Buffer Buffer::slice(size_t offset, size_t bytes) const {
  DGCN_CHECK(offset <= size_ && bytes <= size_ - offset,
             "buffer: slice [{}, {}) out of range of a {}-byte buffer", offset, offset + bytes, size_);
  return Buffer(owner_, data_ + offset, bytes);
}

void Buffer::check_view(size_t elem_size, size_t align) const {
  DGCN_CHECK(size_ % elem_size == 0, "buffer: {} bytes is not a whole number of {}-byte elements", size_,
             elem_size);
  DGCN_CHECK(reinterpret_cast<uintptr_t>(data_) % align == 0, "buffer: data not aligned to {} bytes", align);
}

uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : UINT64_MAX;
}

}  // namespace dgcn
