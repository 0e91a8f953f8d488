#include "datasets/mnist_idx.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "ci_skip.h"
#include "dataset_files.h"

namespace dgcn {
namespace {

using testing::error_of;
using testing::TempDir;

// An IDX file's bytes: magic, big-endian dimensions, data.
std::string idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string out = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<char>(d >> shift));
  }
  out.append(data.begin(), data.end());
  return out;
}

void write_file(const std::string& path, const std::string& bytes, bool gzip) {
  if (gzip) {
    testing::write_gz(path, bytes);
  } else {
    testing::write_text(path, bytes);
  }
}

std::vector<uint8_t> iota_bytes(size_t n, uint8_t mod = 251) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i % mod);
  return v;
}

// Writes the four MNIST files of a tiny dataset (count x 3 x 2 images).
void write_mnist(const TempDir& dir, int64_t train, int64_t test, bool gzip) {
  std::string ext = gzip ? ".gz" : "";
  write_file(dir / ("train-images-idx3-ubyte" + ext),
             idx_bytes(8, {uint32_t(train), 3, 2}, iota_bytes(train * 6)), gzip);
  write_file(dir / ("train-labels-idx1-ubyte" + ext), idx_bytes(8, {uint32_t(train)}, iota_bytes(train, 10)),
             gzip);
  write_file(dir / ("t10k-images-idx3-ubyte" + ext),
             idx_bytes(8, {uint32_t(test), 3, 2}, iota_bytes(test * 6)), gzip);
  write_file(dir / ("t10k-labels-idx1-ubyte" + ext), idx_bytes(8, {uint32_t(test)}, iota_bytes(test, 10)),
             gzip);
}

// The message names the file and contains `needle`.
void expect_error(const std::string& path, const std::string& needle) {
  std::string message = error_of([&] { read_idx_ubyte(path); });
  EXPECT_NE(message.find(needle), std::string::npos) << "expected '" << needle << "', got: " << message;
  EXPECT_NE(message.find(path), std::string::npos) << "the message names the file: " << message;
}

TEST(MnistIdx, ReadsRawAndGzipAlike) {
  TempDir dir;
  auto data = iota_bytes(4 * 3 * 2);
  for (bool gzip : {false, true}) {
    std::string path = dir / (gzip ? "a.gz" : "a");
    write_file(path, idx_bytes(8, {4, 3, 2}, data), gzip);
    IdxArray a = read_idx_ubyte(path);
    EXPECT_EQ(a.dims, (std::vector<int64_t>{4, 3, 2}));
    EXPECT_EQ(a.data, data);
  }
}

TEST(MnistIdx, RejectsBadHeadersAndSizes) {
  TempDir dir;
  auto put = [&](const std::string& name, const std::string& bytes) {
    write_file(dir / (name), bytes, name.ends_with(".gz"));
    return dir / (name);
  };
  expect_error(put("magic", std::string("\x01\x00\x08\x01\x00\x00\x00\x01\x05", 9)), "bad magic 01000801");
  expect_error(put("type", idx_bytes(0x0D, {1}, {0, 0, 0, 0})), "element type 0x0d is not supported");
  expect_error(put("dims", idx_bytes(8, {}, {})), "0 dimensions");
  expect_error(put("zero", idx_bytes(8, {3, 0}, {})), "dimension 1 is 0");
  expect_error(put("short", idx_bytes(8, {4, 2}, iota_bytes(7))),
               "header says 8 bytes of data (4x2), found only 7");
  expect_error(put("short.gz", idx_bytes(8, {4, 2}, iota_bytes(7))), "found only 7");
  expect_error(put("long", idx_bytes(8, {4, 2}, iota_bytes(9))), "has bytes after the 8");
  expect_error(put("tiny", std::string(2, '\0')), "shorter than the 4-byte magic");
  expect_error(put("nodims", idx_bytes(8, {7, 7, 7}, {}).substr(0, 6)),
               "header ends before its 3 dimensions");
  // A lying header: 4 billion x 255 x 255 images in a 20-byte file is
  // refused without trying to allocate what it claims.
  expect_error(put("huge", idx_bytes(8, {0xFFFFFFFFu, 255, 255}, iota_bytes(4))), "more than 1 TiB");
  expect_error(put("lying", idx_bytes(8, {60000, 28, 28}, iota_bytes(100))), "found only 100");
  expect_error(dir / ("missing"), "cannot open");
}

TEST(MnistIdx, ReadsAnMnistDirectory) {
  for (bool gzip : {false, true}) {
    TempDir dir;
    write_mnist(dir, 20, 7, gzip);
    MnistData d = read_mnist_dir(dir.path().string());
    EXPECT_EQ(d.train.count, 20);
    EXPECT_EQ(d.train.rows, 3);
    EXPECT_EQ(d.train.cols, 2);
    EXPECT_EQ(d.train.pixels, iota_bytes(120));
    EXPECT_EQ(d.train.labels, iota_bytes(20, 10));
    EXPECT_EQ(d.test.count, 7);
    EXPECT_EQ(d.test.labels, iota_bytes(7, 10));
  }
}

TEST(MnistIdx, DirectoryChecksAcrossFiles) {
  TempDir dir;
  write_mnist(dir, 20, 7, false);
  const std::string labels = dir / "t10k-labels-idx1-ubyte";
  auto read = [&] { read_mnist_dir(dir.path().string()); };
  write_file(labels, idx_bytes(8, {6}, iota_bytes(6, 10)), false);
  EXPECT_NE(error_of(read).find("has 7 images but"), std::string::npos) << error_of(read);
  write_file(labels, idx_bytes(8, {7}, {0, 1, 2, 10, 4, 5, 6}), false);
  EXPECT_NE(error_of(read).find("label 10 at index 3"), std::string::npos) << error_of(read);
  std::filesystem::remove(labels);
  EXPECT_NE(error_of(read).find("t10k-labels-idx1-ubyte"), std::string::npos) << error_of(read);
}

TEST(MnistIdx, DebianFashionMnist) {
  if (!std::filesystem::exists(kDebianFashionMnistDir)) {
    DGCN_SKIP_OUTSIDE_CI(kDebianFashionMnistDir << " is absent (Debian package dataset-fashion-mnist)");
  }
  MnistData d = read_mnist_dir(kDebianFashionMnistDir);
  EXPECT_EQ(d.train.count, 60000);
  EXPECT_EQ(d.test.count, 10000);
  EXPECT_EQ(d.train.rows, 28);
  EXPECT_EQ(d.train.cols, 28);
  std::vector<int64_t> per_class(kMnistClasses, 0);
  for (uint8_t l : d.train.labels) per_class[l]++;
  for (int64_t c : per_class) EXPECT_EQ(c, 6000);  // Fashion-MNIST is balanced
}

}  // namespace
}  // namespace dgcn
