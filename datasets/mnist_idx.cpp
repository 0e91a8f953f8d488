#include "datasets/mnist_idx.h"

#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "base/error.h"

namespace dgcn {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads up to `size` bytes; returns how many were read (short at end of file).
size_t read_some(gzFile file, uint8_t* out, size_t size, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(size - done, size_t{1} << 30));
    int n = gzread(file, out + done, chunk);
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(file, &code);
      throw Error(fmt::format("idx file {}: read failed: {}", path, message ? message : "unknown error"));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

uint32_t big_endian(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string find_file(const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  for (const std::string& candidate : {name + ".gz", name}) {
    fs::path p = fs::path(dir) / candidate;
    if (fs::exists(p)) return p.string();
  }
  throw Error(
      fmt::format("mnist dir {}: neither {} nor {}.gz exists (expected the four MNIST-format IDX "
                  "files: train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
                  "t10k-labels-idx1-ubyte)",
                  dir, name, name));
}

MnistSplit read_split(const std::string& dir, const std::string& prefix) {
  std::string images_path = find_file(dir, prefix + "-images-idx3-ubyte");
  std::string labels_path = find_file(dir, prefix + "-labels-idx1-ubyte");
  IdxArray images = read_idx_ubyte(images_path);
  IdxArray labels = read_idx_ubyte(labels_path);
  DGCN_CHECK(images.dims.size() == 3,
             "idx file {}: images must have 3 dimensions (count, rows, cols), got {}", images_path,
             images.dims.size());
  DGCN_CHECK(labels.dims.size() == 1, "idx file {}: labels must have 1 dimension, got {}", labels_path,
             labels.dims.size());
  DGCN_CHECK(images.dims[0] == labels.dims[0], "mnist dir {}: {} has {} images but {} has {} labels", dir,
             images_path, images.dims[0], labels_path, labels.dims[0]);
  auto bad =
      std::find_if(labels.data.begin(), labels.data.end(), [](uint8_t l) { return l >= kMnistClasses; });
  DGCN_CHECK(bad == labels.data.end(), "idx file {}: label {} at index {} is not a class in [0, {})",
             labels_path, int{*bad}, bad - labels.data.begin(), kMnistClasses);
  MnistSplit split;
  split.count = images.dims[0];
  split.rows = images.dims[1];
  split.cols = images.dims[2];
  split.pixels = std::move(images.data);
  split.labels = std::move(labels.data);
  return split;
}

}  // namespace

IdxArray read_idx_ubyte(const std::string& path) {
  GzFile file(gzopen(path.c_str(), "rb"));
  DGCN_CHECK(file != nullptr, "idx file {}: cannot open: {}", path, std::strerror(errno));
  gzbuffer(file.get(), 1 << 20);

  uint8_t magic[4];
  DGCN_CHECK(read_some(file.get(), magic, 4, path) == 4, "idx file {}: shorter than the 4-byte magic", path);
  DGCN_CHECK(magic[0] == 0 && magic[1] == 0,
             "idx file {}: bad magic {:02x}{:02x}{:02x}{:02x} (an IDX file starts with two zero bytes)", path,
             magic[0], magic[1], magic[2], magic[3]);
  DGCN_CHECK(magic[2] == 0x08,
             "idx file {}: element type {:#04x} is not supported (only 0x08, unsigned byte)", path, magic[2]);
  int ndims = magic[3];
  DGCN_CHECK(ndims >= 1 && ndims <= 4, "idx file {}: {} dimensions (supported: 1 to 4)", path, ndims);

  uint8_t dim_bytes[16];
  DGCN_CHECK(read_some(file.get(), dim_bytes, 4 * ndims, path) == static_cast<size_t>(4 * ndims),
             "idx file {}: header ends before its {} dimensions", path, ndims);
  IdxArray out;
  uint64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    uint32_t dim = big_endian(dim_bytes + 4 * d);
    DGCN_CHECK(dim > 0, "idx file {}: dimension {} is 0", path, d);
    out.dims.push_back(dim);
    DGCN_CHECK(total <= (uint64_t{1} << 40) / dim, "idx file {}: dimensions {} describe more than 1 TiB",
               path, fmt::join(out.dims, "x"));
    total *= dim;
  }

  // Grow with the bytes actually present, never with what the header claims.
  constexpr size_t kChunk = size_t{16} << 20;
  size_t have = 0;
  while (have < total) {
    size_t want = std::min<uint64_t>(kChunk, total - have);
    out.data.resize(have + want);
    size_t got = read_some(file.get(), out.data.data() + have, want, path);
    have += got;
    if (got < want) break;
  }
  DGCN_CHECK(have == total, "idx file {}: header says {} bytes of data ({}), found only {}", path, total,
             fmt::join(out.dims, "x"), have);
  uint8_t extra;
  DGCN_CHECK(read_some(file.get(), &extra, 1, path) == 0,
             "idx file {}: has bytes after the {} the header describes ({})", path, total,
             fmt::join(out.dims, "x"));
  return out;
}

MnistData read_mnist_dir(const std::string& dir) {
  MnistData data;
  data.train = read_split(dir, "train");
  data.test = read_split(dir, "t10k");
  DGCN_CHECK(data.train.rows == data.test.rows && data.train.cols == data.test.cols,
             "mnist dir {}: train images are {}x{} but test images are {}x{}", dir, data.train.rows,
             data.train.cols, data.test.rows, data.test.cols);
  return data;
}

}  // namespace dgcn
