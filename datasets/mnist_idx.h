// Reader of the IDX files MNIST and Fashion-MNIST ship in
// (http://yann.lecun.com/exdb/mnist/): a big-endian header, then raw bytes.
//
//   magic   = 0x00 0x00 <type> <ndims>   type 0x08 = unsigned byte (the only one used)
//   dims    = ndims x uint32 big-endian  (images: count, rows, cols; labels: count)
//   data    = prod(dims) bytes
//
// Files may be gzip-compressed (.gz) or raw; zlib reads both. The header is
// checked before it is trusted: the data must be exactly prod(dims) bytes,
// and memory grows with the bytes actually read, so a lying header cannot
// cause a huge allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dgcn {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // prod(dims) bytes, row-major
};

// Reads one IDX file of unsigned bytes. Throws dgcn::Error naming the file,
// the field and the values on a bad magic, an unsupported type, a dimension
// count outside [1, 4], a zero-size header or data that is short or long.
IdxArray read_idx_ubyte(const std::string& path);

struct MnistSplit {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  // count x rows x cols
  std::vector<uint8_t> labels;  // count, each in [0, kMnistClasses)
};

inline constexpr int kMnistClasses = 10;

struct MnistData {
  MnistSplit train, test;
};

// Reads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte
// and t10k-labels-idx1-ubyte from `dir`, each as NAME.gz or NAME (the .gz is
// preferred when both exist). Checks images are 3-d, labels 1-d, the counts
// agree, both splits share the image size and labels are below 10.
MnistData read_mnist_dir(const std::string& dir);

// Where Debian's dataset-fashion-mnist package puts Fashion-MNIST.
inline constexpr const char* kDebianFashionMnistDir = "/usr/share/datasets/fashion-mnist";

}  // namespace dgcn
