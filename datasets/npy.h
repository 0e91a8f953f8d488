// NumPy's .npy format (also the members of an .npz archive): header parsing
// and validation, reading into a native-endian, C-order Buffer, and checked
// conversions to the types dgcn stores.
//
// The header is trusted only after it is checked: a supported dtype with its
// byte order, a shape whose element count times the item size does not
// overflow, and a size that matches the bytes the container says it holds.
// Nothing is allocated for the data before that, so a header announcing 1 TB
// in a 1 KB file is an error, not an allocation.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/buffer.h"

namespace dgcn {

enum class DType : uint8_t {
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64,
  kBytes,  // fixed-width byte strings ('|S3'): scipy's format.npy
};
const char* dtype_name(DType dtype);  // "int32", "float64", "bytes", ...

struct NpyHeader {
  std::string descr;  // as written, e.g. "<f4"
  DType dtype = DType::kUInt8;
  size_t itemsize = 1;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;  // magic + version + length + dict

  int64_t count() const;             // product of the shape (1 for a scalar)
  uint64_t data_bytes() const;       // count() * itemsize
  std::string shape_string() const;  // "(2708, 1433)"
};

// Parses the header at the start of `prefix`, which must hold the whole
// header (data may follow). Errors name `what`.
NpyHeader parse_npy_header(std::span<const std::byte> prefix, const std::string& what);

// The header of an array described by numpy's own terms (dtype string such as
// "<f4", memory order, shape), checked as parse_npy_header checks a file's:
// a supported dtype and a byte size that does not overflow. The one rule for
// arrays read from .npy streams and from pickles (datasets/pickle.cpp).
NpyHeader make_npy_header(std::string descr, bool fortran_order, std::vector<int64_t> shape,
                          const std::string& what);

// An array in native byte order and C (row-major) order.
struct NpyArray {
  NpyHeader header;
  Buffer data;

  DType dtype() const { return header.dtype; }
  const std::vector<int64_t>& shape() const { return header.shape; }
  int64_t count() const { return header.count(); }
  template <class T>
  std::span<const T> as() const {
    return data.as<T>();
  }
};

// Decodes an array's bytes as stored (the header's byte order and memory
// order; `stored` holds header.data_bytes() bytes) into native byte order and
// C order, whatever the number of dimensions: the one decoder of numpy data,
// for .npy streams and pickled arrays alike. A Fortran-order [2 x 3] array
// stored as 0 3 1 4 2 5 comes back as 0 1 2 3 4 5.
NpyArray decode_npy(NpyHeader header, MutableBuffer stored, const std::string& what);

// Reads just the header of an .npy stream (the stream is left at the data).
NpyHeader read_npy_header(const std::function<size_t(void*, size_t)>& read, const std::string& what);

// Reads one .npy stream. `read(dst, n)` returns the bytes it read (fewer than
// n only at the end); `declared_bytes` is the stream's size as its container
// declares it (file size, zip member size). The header must account for
// exactly that many bytes, and the stream must really hold them.
NpyArray read_npy(const std::function<size_t(void*, size_t)>& read, uint64_t declared_bytes,
                  const std::string& what);

// Reads an .npy file.
NpyArray read_npy_file(const std::string& path);

// Writes `data` as an .npy file (format 1.0, C order, little-endian) numpy
// reads with np.load, atomically (base/atomic_file.h). dtype: kInt64,
// kInt32, kFloat32 or kFloat64; `data` holds product(shape) elements.
void write_npy(const std::string& path, DType dtype, const std::vector<int64_t>& shape, const void* data);

// Checked conversions; `what` names the array in errors.
// Any integer dtype (and bool) to int64 (uint64 above INT64_MAX is an error).
std::vector<int64_t> to_int64(const NpyArray& array, const std::string& what);
// Any numeric dtype to float32 (float64 values outside float range are an error).
Buffer to_float32(const NpyArray& array, const std::string& what);
// A 'S' array's elements as strings (trailing NULs removed).
std::vector<std::string> to_strings(const NpyArray& array, const std::string& what);

}  // namespace dgcn
