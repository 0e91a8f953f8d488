// A restricted reader of Python pickles, for the files datasets ship as
// pickles (Planetoid's ind.<name>.{x,tx,allx,y,ty,ally,graph}). It knows the
// opcodes of protocols 0-4 that such files use and only the few classes they
// are made of: numpy arrays and dtypes, scipy CSR matrices, defaultdicts,
// lists. Nothing is imported or executed: a GLOBAL is a name looked up in a
// fixed table, REDUCE and BUILD only assemble those known objects, and
// anything else is an error naming the opcode or the class and the offset.
//
// Note [Restricted unpickling]
// pickle is a stack machine: opcodes push values, build containers from the
// values above a MARK, store and fetch them in a memo, and call "globals"
// (REDUCE: callable + argument tuple). Python's own unpickler imports any
// module a file names and calls it, so reading a hostile pickle runs code.
// Here the only callables are the constructors of the allowed classes:
//   numpy.core.multiarray._reconstruct(ndarray, (0,), b'b') -> an empty array,
//   then BUILD (version, shape, dtype, fortran, raw bytes) fills it;
//   numpy.dtype('f4', align, copy) -> a dtype, BUILD (3, '<', ...) sets the
//   byte order; _codecs.encode(text, 'latin1') -> bytes (how Python 3 writes
//   bytes in protocol 2); copyreg._reconstructor(csr_matrix, object, None) or
//   NEWOBJ(csr_matrix) -> an empty matrix, BUILD {'_shape', 'data',
//   'indices', 'indptr', ...} fills it; collections.defaultdict(list) -> a
//   dict. Values live in one arena and refer to each other by index, so a
//   deeply nested or self-referencing file cannot overflow the stack, and
//   every size is bounded by the bytes actually present.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dgcn::detail::pickle {

enum class Kind : uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kBytes,   // raw bytes (protocol 0-2 strings, protocol 3 bytes, _codecs.encode)
  kString,  // unicode text, UTF-8
  kTuple,
  kList,
  kDict,    // also a defaultdict
  kGlobal,  // one of the allowed names (text: "module name")
  kArray,   // a numpy array
  kDtype,   // a numpy dtype
  kObject,  // a scipy CSR matrix: its attribute dict in `items`
};
const char* kind_name(Kind kind);

using Ref = uint32_t;  // index of a value in its Pickle

struct Value {
  Kind kind = Kind::kNone;
  int64_t i = 0;               // kBool, kInt
  double f = 0;                // kFloat
  std::string text;            // kBytes, kString, kGlobal; kArray: raw data; kDtype: descr ("<f4")
  std::vector<Ref> items;      // kTuple, kList; kDict, kObject: key, value, key, value, ...
  std::vector<int64_t> shape;  // kArray
  Ref dtype = 0;               // kArray: its kDtype value
  bool fortran = false;        // kArray
};

// A loaded pickle: every value in one arena, and the one the file returns.
class Pickle {
 public:
  const Value& at(Ref r) const { return values_.at(r); }
  Ref root() const { return root_; }
  const std::string& what() const { return what_; }

  // Checked accessors: a value of another kind is an error naming `field`.
  const Value& expect(Ref r, Kind kind, const std::string& field) const;
  int64_t as_int(Ref r, const std::string& field) const;
  // The value of dict or object `r` under string key `key`, or nullptr.
  const Ref* find(Ref r, const std::string& key) const;

 private:
  friend Pickle load(std::span<const std::byte> bytes, const std::string& what);
  std::vector<Value> values_;
  Ref root_ = 0;
  std::string what_;
};

// Loads a pickle of the allowed kinds; `what` names it in errors (the file).
// Throws dgcn::Error on a truncated or malformed stream, an opcode outside
// the supported set, or a global outside the allowed classes.
Pickle load(std::span<const std::byte> bytes, const std::string& what);

// A numeric numpy array as float32 in C order (descr: bool, int, uint or
// float of any width; native or swapped byte order; C or Fortran order of any
// number of dimensions), decoded and converted by the .npy reader's rules
// (datasets/npy.h: decode_npy, to_float32, to_int64). Errors name `field`.
std::vector<float> array_as_float32(const Pickle& p, Ref array, const std::string& field);
// An integer numpy array as int64 (bool and integer dtypes).
std::vector<int64_t> array_as_int64(const Pickle& p, Ref array, const std::string& field);

// A 2-D matrix read from a numpy array or a scipy CSR matrix, dense, float32.
struct DenseMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> values;  // rows x cols, row-major
};
// Throws when the value is neither, or its parts disagree (shapes, indptr
// monotone and ending at nnz, column ids in range); `max_bytes` bounds the
// dense result (a tiny file must not claim a huge matrix).
DenseMatrix as_dense_matrix(const Pickle& p, Ref value, const std::string& field, uint64_t max_bytes);

}  // namespace dgcn::detail::pickle
