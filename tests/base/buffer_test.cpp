// base/buffer.h: read-only and writable buffers are two types; copies share
// bytes, copy_of copies them, views are checked.
#include "base/buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace dgcn {
namespace {

// A read-only Buffer never becomes writable: no conversion, no as_mutable.
template <class B>
concept HasMutableView = requires(B b) {
  b.template as_mutable<int>();
};
static_assert(!std::is_convertible_v<Buffer, MutableBuffer>);
static_assert(!HasMutableView<Buffer>);
static_assert(HasMutableView<MutableBuffer>);
static_assert(std::is_convertible_v<MutableBuffer, Buffer>);

TEST(Buffer, SharesAndChecksViews) {
  MutableBuffer b = Buffer::zeros<int64_t>(4);
  EXPECT_EQ(b.as<int64_t>()[3], 0);
  Buffer c = b;  // shares bytes
  b.as_mutable<int64_t>()[1] = 42;
  EXPECT_EQ(c.as<int64_t>()[1], 42);
  EXPECT_THROW(b.slice(0, 5).as<int32_t>(), Error);  // 5 bytes are not whole int32s
  EXPECT_THROW(b.slice(30, 8), Error);
  EXPECT_EQ(b.slice(8, 8).as<int64_t>()[0], 42);
}

TEST(Buffer, CopyOfCopiesTheValuesIntoItsOwnBytes) {
  std::vector<int32_t> values{1, -2, 3};
  MutableBuffer copy = Buffer::copy_of(std::span<const int32_t>(values));
  EXPECT_EQ(copy.size(), 3 * sizeof(int32_t));
  EXPECT_NE(static_cast<const void*>(copy.data()), static_cast<const void*>(values.data()));
  copy.as_mutable<int32_t>()[0] = 7;
  values[2] = 9;
  const auto v = copy.as<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(v.begin(), v.end()), (std::vector<int32_t>{7, -2, 3}));
  EXPECT_EQ(values[0], 1);
  EXPECT_TRUE(Buffer::copy_of(std::span<const int32_t>()).empty());
}

TEST(Buffer, FromVectorAdoptsTheStorageWritably) {
  std::vector<float> v{1.5f, 2.5f};
  const float* storage = v.data();
  MutableBuffer b = Buffer::from_vector(std::move(v));
  EXPECT_EQ(static_cast<const void*>(b.data()), static_cast<const void*>(storage));
  b.as_mutable<float>()[1] = 4.0f;
  EXPECT_EQ(b.as<float>()[1], 4.0f);
}

}  // namespace
}  // namespace dgcn
