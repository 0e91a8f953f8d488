#include "datasets/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>

#include "base/atomic_file.h"
#include "base/error.h"
#include "datasets/csv.h"

namespace dgcn {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy itself refuses headers above 10 kB by default; allow generous slack.
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;

// A cursor over the header's Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2708, 1433), }
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    DGCN_CHECK(accept(c), "{}: npy header: expected '{}' at offset {} of {}", what_, c, pos_,
               quote_value(text_));
  }
  std::string quoted_string() {
    skip_space();
    DGCN_CHECK(pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"'),
               "{}: npy header: expected a quoted string at offset {} of {}", what_, pos_,
               quote_value(text_));
    char q = text_[pos_++];
    size_t end = text_.find(q, pos_);
    DGCN_CHECK(end != std::string_view::npos, "{}: npy header: unterminated string in {}", what_,
               quote_value(text_));
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  std::string_view word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

void parse_descr(NpyHeader& h, const std::string& what) {
  const std::string& d = h.descr;
  DGCN_CHECK(d.size() >= 3 && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '='),
             "{}: npy dtype '{}' is not supported (expected a simple dtype such as '<f4' or '<i8')", what, d);
  int64_t size = 0;
  DGCN_CHECK(parse_number(std::string_view(d).substr(2), size) && size > 0 && size <= (1 << 20),
             "{}: npy dtype '{}' has no valid item size", what, d);
  h.itemsize = static_cast<size_t>(size);
  h.big_endian = d[0] == '>' || (d[0] == '=' && std::endian::native == std::endian::big);
  const char kind = d[1];
  auto pick = [&](std::initializer_list<std::pair<int64_t, DType>> options) {
    for (auto [s, t] : options) {
      if (s == size) {
        h.dtype = t;
        return;
      }
    }
    throw Error(fmt::format("{}: npy dtype '{}' is not supported", what, d));
  };
  switch (kind) {
    case 'b':
      pick({{1, DType::kBool}});
      break;
    case 'i':
      pick({{1, DType::kInt8}, {2, DType::kInt16}, {4, DType::kInt32}, {8, DType::kInt64}});
      break;
    case 'u':
      pick({{1, DType::kUInt8}, {2, DType::kUInt16}, {4, DType::kUInt32}, {8, DType::kUInt64}});
      break;
    case 'f':
      pick({{4, DType::kFloat32}, {8, DType::kFloat64}});
      break;
    case 'S':
      h.dtype = DType::kBytes;
      break;
    default:
      throw Error(fmt::format(
          "{}: npy dtype '{}' is not supported (numbers and byte strings only; unicode 'U' and object 'O' "
          "arrays are not read)",
          what, d));
  }
}

}  // namespace

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "bool";
    case DType::kInt8:
      return "int8";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt16:
      return "int16";
    case DType::kUInt16:
      return "uint16";
    case DType::kInt32:
      return "int32";
    case DType::kUInt32:
      return "uint32";
    case DType::kInt64:
      return "int64";
    case DType::kUInt64:
      return "uint64";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kBytes:
      return "bytes";
  }
  return "unknown";
}

int64_t NpyHeader::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // parse_npy_header checked that this does not overflow
  return n;
}

uint64_t NpyHeader::data_bytes() const {
  return static_cast<uint64_t>(count()) * itemsize;
}

std::string NpyHeader::shape_string() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

NpyHeader parse_npy_header(std::span<const std::byte> prefix, const std::string& what) {
  auto chars = std::string_view(reinterpret_cast<const char*>(prefix.data()), prefix.size());
  DGCN_CHECK(chars.size() >= 10 && chars.substr(0, 6) == kMagic,
             "{}: not an .npy stream (no \\x93NUMPY magic)", what);
  const int major = static_cast<unsigned char>(chars[6]);
  DGCN_CHECK(major >= 1 && major <= 3, "{}: npy format version {}.{} is not supported", what, major,
             static_cast<unsigned char>(chars[7]));
  size_t header_len = 0;
  size_t offset = 0;
  auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(chars[i])); };
  if (major == 1) {
    header_len = byte(8) | byte(9) << 8;
    offset = 10;
  } else {
    DGCN_CHECK(chars.size() >= 12, "{}: npy header truncated ({} bytes)", what, chars.size());
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    offset = 12;
  }
  DGCN_CHECK(header_len <= kMaxHeaderBytes, "{}: npy header length {} is implausible (limit {})", what,
             header_len, kMaxHeaderBytes);
  DGCN_CHECK(offset + header_len <= chars.size(), "{}: npy header truncated: {} bytes announced, {} present",
             what, header_len, chars.size() - offset);

  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  DictParser p(chars.substr(offset, header_len), what);
  bool seen_descr = false, seen_order = false, seen_shape = false;
  p.expect('{');
  while (!p.accept('}')) {
    std::string key = p.quoted_string();
    p.expect(':');
    if (key == "descr") {
      DGCN_CHECK(!p.peek('['), "{}: npy structured dtypes are not supported", what);
      descr = p.quoted_string();
      seen_descr = true;
    } else if (key == "fortran_order") {
      std::string_view w = p.word();
      DGCN_CHECK(w == "True" || w == "False", "{}: npy fortran_order is '{}', expected True or False", what,
                 w);
      fortran_order = w == "True";
      seen_order = true;
    } else if (key == "shape") {
      p.expect('(');
      while (!p.accept(')')) {
        std::string_view w = p.word();
        int64_t d = 0;
        DGCN_CHECK(parse_number(w, d) && d >= 0, "{}: npy shape has a bad dimension '{}'", what, w);
        shape.push_back(d);
        if (!p.accept(',')) {
          p.expect(')');
          break;
        }
      }
      seen_shape = true;
    } else {
      throw Error(fmt::format("{}: npy header has an unknown key '{}'", what, key));
    }
    if (!p.accept(',')) {
      p.expect('}');
      break;
    }
  }
  DGCN_CHECK(seen_descr && seen_order && seen_shape, "{}: npy header lacks {}", what,
             !seen_descr   ? "'descr'"
             : !seen_order ? "'fortran_order'"
                           : "'shape'");
  NpyHeader h = make_npy_header(std::move(descr), fortran_order, std::move(shape), what);
  h.data_offset = offset + header_len;
  return h;
}

NpyHeader make_npy_header(std::string descr, bool fortran_order, std::vector<int64_t> shape,
                          const std::string& what) {
  NpyHeader h;
  h.descr = std::move(descr);
  parse_descr(h, what);
  h.fortran_order = fortran_order;
  h.shape = std::move(shape);
  // Element count and byte size must not overflow (a lying header must not wrap around).
  uint64_t bytes = h.itemsize;
  for (int64_t d : h.shape) {
    DGCN_CHECK(d >= 0, "{}: npy shape {} has a negative dimension", what, h.shape_string());
    DGCN_CHECK(d == 0 || bytes <= (uint64_t{1} << 62) / static_cast<uint64_t>(d),
               "{}: npy shape {} of {} is larger than any file", what, h.shape_string(), h.descr);
    bytes *= static_cast<uint64_t>(d);
  }
  return h;
}

NpyHeader read_npy_header(const std::function<size_t(void*, size_t)>& read, const std::string& what) {
  // 10 fixed bytes (12 from version 2 on), then the dict: read exactly these.
  std::vector<std::byte> head(10);
  size_t got = read(head.data(), 10);
  DGCN_CHECK(got == 10, "{}: {} bytes, too short for an .npy header", what, got);
  auto u8 = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(head[i])); };
  DGCN_CHECK(std::string_view(reinterpret_cast<const char*>(head.data()), 6) == kMagic,
             "{}: not an .npy stream (no \\x93NUMPY magic)", what);
  size_t len = u8(8) | u8(9) << 8;
  if (u8(6) >= 2) {
    head.resize(12);
    DGCN_CHECK(read(head.data() + 10, 2) == 2, "{}: npy header truncated", what);
    len |= u8(10) << 16 | u8(11) << 24;
  }
  DGCN_CHECK(len <= kMaxHeaderBytes, "{}: npy header length {} is implausible (limit {})", what, len,
             kMaxHeaderBytes);
  size_t fixed = head.size();
  head.resize(fixed + len);
  got = len == 0 ? 0 : read(head.data() + fixed, len);
  DGCN_CHECK(got == len, "{}: npy header truncated: {} bytes announced, {} present", what, len, got);
  return parse_npy_header(head, what);
}

NpyArray read_npy(const std::function<size_t(void*, size_t)>& read, uint64_t declared_bytes,
                  const std::string& what) {
  NpyHeader h = read_npy_header(read, what);
  const uint64_t data_bytes = h.data_bytes();
  DGCN_CHECK(
      declared_bytes >= h.data_offset && declared_bytes - h.data_offset == data_bytes,
      "{}: npy header announces shape {} of {} = {} data bytes, but the stream holds {} bytes after its "
      "{}-byte header",
      what, h.shape_string(), h.descr, data_bytes,
      declared_bytes >= h.data_offset ? declared_bytes - h.data_offset : 0, h.data_offset);
  MutableBuffer stored = Buffer::allocate(static_cast<size_t>(data_bytes));
  auto dst = stored.as_mutable<std::byte>();
  size_t have = 0;
  while (have < data_bytes) {
    size_t n = read(dst.data() + have, static_cast<size_t>(data_bytes) - have);
    if (n == 0) break;
    have += n;
  }
  DGCN_CHECK(have == data_bytes, "{}: truncated npy data: shape {} of {} needs {} bytes, only {} present",
             what, h.shape_string(), h.descr, data_bytes, have);
  std::byte extra;
  DGCN_CHECK(read(&extra, 1) == 0, "{}: npy stream has bytes after the {} data bytes its header announces",
             what, data_bytes);
  return decode_npy(std::move(h), std::move(stored), what);
}

NpyArray decode_npy(NpyHeader header, MutableBuffer stored, const std::string& what) {
  NpyArray array;
  array.header = std::move(header);
  NpyHeader& h = array.header;
  DGCN_CHECK(stored.size() == h.data_bytes(), "{}: npy shape {} of {} needs {} bytes, {} given", what,
             h.shape_string(), h.descr, h.data_bytes(), stored.size());
  if (h.big_endian && h.itemsize > 1 && h.dtype != DType::kBytes) {
    auto raw = stored.as_mutable<std::byte>();
    for (size_t i = 0; i < raw.size(); i += h.itemsize)
      std::reverse(raw.begin() + i, raw.begin() + i + h.itemsize);
  }
  h.big_endian = false;
  if (!h.fortran_order || h.shape.size() < 2 || h.count() == 0) {
    h.fortran_order = false;
    array.data = std::move(stored);
    return array;
  }
  // Column-major -> row-major for any number of dimensions: walk the C-order
  // elements with their multi-index and keep the Fortran offset
  // sum_k index[k] * prod_{j<k} shape[j] up to date as the index counts.
  const size_t ndim = h.shape.size();
  std::vector<int64_t> stride(ndim, 1);  // Fortran-order strides, in elements
  for (size_t k = 1; k < ndim; ++k) stride[k] = stride[k - 1] * h.shape[k - 1];
  std::vector<int64_t> index(ndim, 0);
  MutableBuffer c_order = Buffer::allocate(stored.size());
  auto out = c_order.as_mutable<std::byte>();
  const std::byte* in = stored.data();
  const size_t item = h.itemsize;
  int64_t f = 0;
  for (int64_t c = 0, n = h.count(); c < n; ++c) {
    std::memcpy(out.data() + static_cast<size_t>(c) * item, in + static_cast<size_t>(f) * item, item);
    for (size_t k = ndim; k-- > 0;) {
      f += stride[k];
      if (++index[k] < h.shape[k]) break;
      f -= stride[k] * h.shape[k];
      index[k] = 0;
    }
  }
  h.fortran_order = false;
  array.data = std::move(c_order);
  return array;
}

NpyArray read_npy_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  DGCN_CHECK(file != nullptr, "{}: cannot open ({})", path, std::strerror(errno));
  DGCN_CHECK(std::fseek(file.get(), 0, SEEK_END) == 0, "{}: cannot seek", path);
  long size = std::ftell(file.get());
  DGCN_CHECK(size >= 0, "{}: cannot tell its size", path);
  std::rewind(file.get());
  return read_npy([&](void* dst, size_t n) { return std::fread(dst, 1, n, file.get()); },
                  static_cast<uint64_t>(size), path);
}

namespace {

template <class T, class F>
void for_each_value(const NpyArray& a, F&& f) {
  auto v = a.as<T>();
  for (size_t i = 0; i < v.size(); ++i) f(i, v[i]);
}

// Calls f(index, value) with every element, typed by the array's dtype.
template <class F>
void visit_numeric(const NpyArray& a, const std::string& what, F&& f) {
  switch (a.dtype()) {
    case DType::kBool:
    case DType::kUInt8:
      return for_each_value<uint8_t>(a, f);
    case DType::kInt8:
      return for_each_value<int8_t>(a, f);
    case DType::kInt16:
      return for_each_value<int16_t>(a, f);
    case DType::kUInt16:
      return for_each_value<uint16_t>(a, f);
    case DType::kInt32:
      return for_each_value<int32_t>(a, f);
    case DType::kUInt32:
      return for_each_value<uint32_t>(a, f);
    case DType::kInt64:
      return for_each_value<int64_t>(a, f);
    case DType::kUInt64:
      return for_each_value<uint64_t>(a, f);
    case DType::kFloat32:
      return for_each_value<float>(a, f);
    case DType::kFloat64:
      return for_each_value<double>(a, f);
    case DType::kBytes:
      break;
  }
  throw Error(fmt::format("{}: expected a numeric array, got dtype '{}'", what, a.header.descr));
}

}  // namespace

std::vector<int64_t> to_int64(const NpyArray& array, const std::string& what) {
  DGCN_CHECK(array.dtype() != DType::kFloat32 && array.dtype() != DType::kFloat64,
             "{}: expected an integer array, got dtype '{}'", what, array.header.descr);
  std::vector<int64_t> out(static_cast<size_t>(array.count()));
  visit_numeric(array, what, [&](size_t i, auto v) {
    if constexpr (std::is_same_v<decltype(v), uint64_t>) {
      DGCN_CHECK(v <= static_cast<uint64_t>(INT64_MAX), "{}: element {} is {}, beyond int64", what, i, v);
    }
    if constexpr (std::is_integral_v<decltype(v)>) out[i] = static_cast<int64_t>(v);
  });
  return out;
}

Buffer to_float32(const NpyArray& array, const std::string& what) {
  if (array.dtype() == DType::kFloat32) return array.data;
  MutableBuffer out = Buffer::allocate(static_cast<size_t>(array.count()) * sizeof(float));
  auto f = out.as_mutable<float>();
  visit_numeric(array, what, [&](size_t i, auto v) {
    if constexpr (std::is_same_v<decltype(v), double>) {
      DGCN_CHECK(!std::isfinite(v) || std::abs(v) <= std::numeric_limits<float>::max(),
                 "{}: element {} is {}, beyond float32", what, i, v);
    }
    f[i] = static_cast<float>(v);
  });
  return out;
}

std::vector<std::string> to_strings(const NpyArray& array, const std::string& what) {
  DGCN_CHECK(array.dtype() == DType::kBytes, "{}: expected a byte-string array, got dtype '{}'", what,
             array.header.descr);
  std::vector<std::string> out;
  auto raw = array.as<char>();
  for (size_t i = 0; i + array.header.itemsize <= raw.size(); i += array.header.itemsize) {
    std::string s(raw.data() + i, array.header.itemsize);
    s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
    out.push_back(std::move(s));
  }
  return out;
}

void write_npy(const std::string& path, DType dtype, const std::vector<int64_t>& shape, const void* data) {
  const char* descr = dtype == DType::kInt64     ? "<i8"
                      : dtype == DType::kInt32   ? "<i4"
                      : dtype == DType::kFloat32 ? "<f4"
                      : dtype == DType::kFloat64 ? "<f8"
                                                 : nullptr;
  DGCN_CHECK(descr != nullptr, "npy {}: writing {} arrays is not supported", path, dtype_name(dtype));
  static_assert(std::endian::native == std::endian::little,
                "npy: written as this machine's (little-endian) bytes");
  std::string dims;
  uint64_t count = 1;
  for (int64_t d : shape) {
    DGCN_CHECK(d >= 0, "npy {}: negative dimension {}", path, d);
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    count *= static_cast<uint64_t>(d);
  }
  if (shape.size() == 1) dims += ",";  // Python's one-element tuple: (3,)
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // magic (6) + version (2) + length (2) + header, padded with spaces and a
  // newline to a multiple of 64 bytes.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  std::string prefix = "\x93NUMPY\x01";
  prefix.push_back('\0');
  prefix.push_back(static_cast<char>(header.size() & 0xff));
  prefix.push_back(static_cast<char>(header.size() >> 8));
  const size_t item = dtype == DType::kInt32 || dtype == DType::kFloat32 ? 4 : 8;
  AtomicFile out(path);
  out.write(prefix.data(), prefix.size());
  out.write(header.data(), header.size());
  if (count > 0) out.write(data, static_cast<size_t>(count) * item);
  out.commit();
}

}  // namespace dgcn
