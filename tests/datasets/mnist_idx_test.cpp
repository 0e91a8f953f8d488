#include "datasets/mnist_idx.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "graph/error.h"
#include "run_command.h"

namespace dgcn {
namespace {

using testing::ScratchDir;

std::vector<uint8_t> idx_bytes(uint8_t type, const std::vector<uint32_t>& dims,
                               const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<uint8_t>(d >> shift));
  }
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
}

std::vector<uint8_t> iota_bytes(size_t n, uint8_t mod = 251) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i % mod);
  return v;
}

// Writes the four MNIST files of a tiny dataset (count x 3 x 2 images).
void write_mnist(const ScratchDir& dir, int64_t train, int64_t test, bool gzip) {
  std::string ext = gzip ? ".gz" : "";
  write_file(dir.file("train-images-idx3-ubyte" + ext),
             idx_bytes(8, {uint32_t(train), 3, 2}, iota_bytes(train * 6)), gzip);
  write_file(dir.file("train-labels-idx1-ubyte" + ext),
             idx_bytes(8, {uint32_t(train)}, iota_bytes(train, 10)), gzip);
  write_file(dir.file("t10k-images-idx3-ubyte" + ext),
             idx_bytes(8, {uint32_t(test), 3, 2}, iota_bytes(test * 6)), gzip);
  write_file(dir.file("t10k-labels-idx1-ubyte" + ext), idx_bytes(8, {uint32_t(test)}, iota_bytes(test, 10)),
             gzip);
}

void expect_error(const std::string& path, const std::string& needle) {
  try {
    read_idx_ubyte(path);
    ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos)
        << "the message names the file: " << e.what();
  }
}

TEST(MnistIdx, ReadsRawAndGzipAlike) {
  ScratchDir dir;
  auto data = iota_bytes(4 * 3 * 2);
  for (bool gzip : {false, true}) {
    std::string path = dir.file(gzip ? "a.gz" : "a");
    write_file(path, idx_bytes(8, {4, 3, 2}, data), gzip);
    IdxArray a = read_idx_ubyte(path);
    EXPECT_EQ(a.dims, (std::vector<int64_t>{4, 3, 2}));
    EXPECT_EQ(a.data, data);
  }
}

TEST(MnistIdx, RejectsBadHeadersAndSizes) {
  ScratchDir dir;
  auto put = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    write_file(dir.file(name), bytes, name.ends_with(".gz"));
    return dir.file(name);
  };
  expect_error(put("magic", {1, 0, 8, 1, 0, 0, 0, 1, 5}), "bad magic 01000801");
  expect_error(put("type", idx_bytes(0x0D, {1}, {0, 0, 0, 0})), "element type 0x0d is not supported");
  expect_error(put("dims", {0, 0, 8, 0}), "0 dimensions");
  expect_error(put("zero", idx_bytes(8, {3, 0}, {})), "dimension 1 is 0");
  expect_error(put("short", idx_bytes(8, {4, 2}, iota_bytes(7))),
               "header says 8 bytes of data (4x2), found only 7");
  expect_error(put("short.gz", idx_bytes(8, {4, 2}, iota_bytes(7))), "found only 7");
  expect_error(put("long", idx_bytes(8, {4, 2}, iota_bytes(9))), "has bytes after the 8");
  expect_error(put("tiny", {0, 0}), "shorter than the 4-byte magic");
  expect_error(put("nodims", {0, 0, 8, 3, 0, 0}), "header ends before its 3 dimensions");
  // A lying header: 4 billion x 255 x 255 images in a 20-byte file is
  // refused without trying to allocate what it claims.
  expect_error(put("huge", idx_bytes(8, {0xFFFFFFFFu, 255, 255}, iota_bytes(4))), "more than 1 TiB");
  expect_error(put("lying", idx_bytes(8, {60000, 28, 28}, iota_bytes(100))), "found only 100");
  expect_error(dir.file("missing"), "cannot open");
}

TEST(MnistIdx, ReadsAnMnistDirectory) {
  for (bool gzip : {false, true}) {
    ScratchDir dir;
    write_mnist(dir, 20, 7, gzip);
    MnistData d = read_mnist_dir(dir.path());
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
  ScratchDir dir;
  write_mnist(dir, 20, 7, false);
  // Labels count disagrees with the images.
  write_file(dir.file("t10k-labels-idx1-ubyte"), idx_bytes(8, {6}, iota_bytes(6, 10)), false);
  EXPECT_THROW(read_mnist_dir(dir.path()), Error);
  // A label that is not a class.
  write_file(dir.file("t10k-labels-idx1-ubyte"), idx_bytes(8, {7}, {0, 1, 2, 10, 4, 5, 6}), false);
  try {
    read_mnist_dir(dir.path());
    ADD_FAILURE() << "label 10 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("label 10 at index 3"), std::string::npos) << e.what();
  }
  // A missing file is named.
  std::filesystem::remove(dir.file("t10k-labels-idx1-ubyte"));
  try {
    read_mnist_dir(dir.path());
    ADD_FAILURE() << "missing file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t10k-labels-idx1-ubyte"), std::string::npos) << e.what();
  }
}

TEST(MnistIdx, DebianFashionMnist) {
  if (!std::filesystem::exists(kDebianFashionMnistDir)) {
    GTEST_SKIP() << kDebianFashionMnistDir << " is absent (Debian package dataset-fashion-mnist)";
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
