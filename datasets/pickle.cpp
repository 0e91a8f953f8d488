// See Note [Restricted unpickling] in pickle.h.
#include "datasets/pickle.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_map>

#include "base/error.h"
#include "datasets/npy.h"

namespace dgcn::detail::pickle {
namespace {

// The globals a dataset pickle may name, by the names Python 2 and 3 write,
// and the one name each stands for here.
struct AllowedGlobal {
  const char* module;
  const char* name;
  const char* canonical;
};
constexpr AllowedGlobal kAllowed[] = {
    {"numpy.core.multiarray", "_reconstruct", "numpy._reconstruct"},
    {"numpy._core.multiarray", "_reconstruct", "numpy._reconstruct"},
    {"numpy", "ndarray", "numpy.ndarray"},
    {"numpy", "dtype", "numpy.dtype"},
    {"_codecs", "encode", "_codecs.encode"},
    {"__builtin__", "bytes", "bytes"},
    {"builtins", "bytes", "bytes"},
    {"copy_reg", "_reconstructor", "copyreg._reconstructor"},
    {"copyreg", "_reconstructor", "copyreg._reconstructor"},
    {"__builtin__", "object", "object"},
    {"builtins", "object", "object"},
    {"__builtin__", "list", "list"},
    {"builtins", "list", "list"},
    {"collections", "defaultdict", "collections.defaultdict"},
    {"scipy.sparse.csr", "csr_matrix", "scipy.csr_matrix"},
    {"scipy.sparse._csr", "csr_matrix", "scipy.csr_matrix"},
};

// The state machine over the bytes; values go into `values`.
class Machine {
 public:
  Machine(std::span<const std::byte> bytes, const std::string& what, std::vector<Value>& values)
      : bytes_(bytes), what_(what), values_(values) {}

  Ref run() {
    for (;;) {
      op_at_ = pos_;
      const uint8_t op = u8();
      switch (op) {
        case 0x80: {  // PROTO
          const uint8_t version = u8();
          check(version <= 5, "protocol {} is not a pickle protocol", version);
          break;
        }
        case 0x95:
          skip(8);
          break;     // FRAME: a length hint
        case '.': {  // STOP
          check(stack_.size() == 1 && marks_.empty(), "STOP with {} values and {} marks on the stack",
                stack_.size(), marks_.size());
          return stack_.back();
        }
        case '(':
          marks_.push_back(stack_.size());
          break;  // MARK
        case '0':
          pop();
          break;  // POP
        case '1':
          pop_mark();
          break;  // POP_MARK
        case '2':
          push(top());
          break;  // DUP
        case 'N':
          push(make(Kind::kNone));
          break;
        case 0x88:
          push(make_int(Kind::kBool, 1));
          break;  // NEWTRUE
        case 0x89:
          push(make_int(Kind::kBool, 0));
          break;  // NEWFALSE
        case 'J':
          push(make_int(Kind::kInt, static_cast<int32_t>(le(4))));
          break;  // BININT
        case 'K':
          push(make_int(Kind::kInt, u8()));
          break;  // BININT1
        case 'M':
          push(make_int(Kind::kInt, static_cast<int64_t>(le(2))));
          break;  // BININT2
        case 0x8a:
          push(make_int(Kind::kInt, long_bytes(u8())));
          break;  // LONG1
        case 0x8b:
          push(make_int(Kind::kInt, long_bytes(le(4))));
          break;  // LONG4
        case 'I':
          push(text_int());
          break;     // INT (protocol 0)
        case 'G': {  // BINFLOAT, big-endian
          const uint64_t bits = be(8);
          Ref r = make(Kind::kFloat);
          values_[r].f = std::bit_cast<double>(bits);
          push(r);
          break;
        }
        case 'T':
          push(make_text(Kind::kBytes, take(le(4))));
          break;  // BINSTRING
        case 'U':
          push(make_text(Kind::kBytes, take(u8())));
          break;  // SHORT_BINSTRING
        case 'B':
          push(make_text(Kind::kBytes, take(le(4))));
          break;  // BINBYTES
        case 'C':
          push(make_text(Kind::kBytes, take(u8())));
          break;  // SHORT_BINBYTES
        case 0x8e:
          push(make_text(Kind::kBytes, take(le(8))));
          break;  // BINBYTES8
        case 'X':
          push(make_text(Kind::kString, utf8(take(le(4)))));
          break;  // BINUNICODE
        case 0x8c:
          push(make_text(Kind::kString, utf8(take(u8()))));
          break;  // SHORT_BINUNICODE
        case 0x8d:
          push(make_text(Kind::kString, utf8(take(le(8)))));
          break;  // BINUNICODE8
        case ')':
          push(make(Kind::kTuple));
          break;  // EMPTY_TUPLE
        case 0x85:
          push(tuple_of(1));
          break;  // TUPLE1
        case 0x86:
          push(tuple_of(2));
          break;  // TUPLE2
        case 0x87:
          push(tuple_of(3));
          break;     // TUPLE3
        case 't': {  // TUPLE
          Ref r = make(Kind::kTuple);
          values_[r].items = pop_mark();
          push(r);
          break;
        }
        case ']':
          push(make(Kind::kList));
          break;     // EMPTY_LIST
        case 'l': {  // LIST
          Ref r = make(Kind::kList);
          values_[r].items = pop_mark();
          push(r);
          break;
        }
        case 'a': {  // APPEND
          const Ref item = pop();
          list_at_top().items.push_back(item);
          break;
        }
        case 'e': {  // APPENDS
          std::vector<Ref> items = pop_mark();
          auto& list = list_at_top().items;
          list.insert(list.end(), items.begin(), items.end());
          break;
        }
        case '}':
          push(make(Kind::kDict));
          break;     // EMPTY_DICT
        case 'd': {  // DICT
          std::vector<Ref> items = pop_mark();
          check(items.size() % 2 == 0, "DICT of an odd number ({}) of keys and values", items.size());
          Ref r = make(Kind::kDict);
          values_[r].items = std::move(items);
          push(r);
          break;
        }
        case 's': {  // SETITEM
          const Ref value = pop(), key = pop();
          auto& dict = dict_at_top().items;
          dict.push_back(key);
          dict.push_back(value);
          break;
        }
        case 'u': {  // SETITEMS
          std::vector<Ref> items = pop_mark();
          check(items.size() % 2 == 0, "SETITEMS of an odd number ({}) of keys and values", items.size());
          auto& dict = dict_at_top().items;
          dict.insert(dict.end(), items.begin(), items.end());
          break;
        }
        case 'c': {  // GLOBAL module\nname\n
          const std::string module = line(), name = line();
          push(global(module, name));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          const Ref name = pop(), module = pop();
          push(global(text_of(module, "STACK_GLOBAL module"), text_of(name, "STACK_GLOBAL name")));
          break;
        }
        case 'R': {  // REDUCE
          const Ref args = pop(), callable = pop();
          push(reduce(callable, args));
          break;
        }
        case 0x81: {  // NEWOBJ
          const Ref args = pop(), cls = pop();
          check(is_global(cls, "scipy.csr_matrix"), "NEWOBJ of {} (only scipy's csr_matrix is allowed)",
                describe(cls));
          (void)args;
          push(make(Kind::kObject));
          break;
        }
        case 'b': {  // BUILD
          const Ref state = pop();
          build(top(), state);
          break;
        }
        case 'q':
          memo_put(u8());
          break;  // BINPUT
        case 'r':
          memo_put(le(4));
          break;  // LONG_BINPUT
        case 0x94:
          memo_put(memo_.size());
          break;  // MEMOIZE
        case 'h':
          push(memo_get(u8()));
          break;  // BINGET
        case 'j':
          push(memo_get(le(4)));
          break;  // LONG_BINGET
        case 'p':
          memo_put(text_number());
          break;  // PUT (protocol 0)
        case 'g':
          push(memo_get(text_number()));
          break;  // GET (protocol 0)
        default:
          fail(
              "opcode 0x{:02x} is not supported (this reader knows the opcodes of numpy/scipy dataset "
              "pickles only)",
              op);
      }
    }
  }

 private:
  template <class... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    throw Error(fmt::format("{}: pickle, opcode at byte {}: {}", what_, op_at_,
                            fmt::format(format, std::forward<Args>(args)...)));
  }
  template <class... Args>
  void check(bool cond, fmt::format_string<Args...> format, Args&&... args) const {
    if (!cond) [[unlikely]]
      fail(format, std::forward<Args>(args)...);
  }

  // --- reading the stream
  void need(uint64_t n) const {
    check(n <= bytes_.size() - pos_, "needs {} more bytes, the file ends after {} (truncated?)", n,
          bytes_.size() - pos_);
  }
  uint8_t u8() {
    need(1);
    return static_cast<uint8_t>(bytes_[pos_++]);
  }
  void skip(uint64_t n) {
    need(n);
    pos_ += n;
  }
  uint64_t le(int n) {
    need(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int k = 0; k < n; ++k) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + k])) << (8 * k);
    pos_ += n;
    return v;
  }
  uint64_t be(int n) {
    need(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int k = 0; k < n; ++k) v = (v << 8) | static_cast<uint8_t>(bytes_[pos_ + k]);
    pos_ += n;
    return v;
  }
  std::string take(uint64_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  std::string line() {
    const size_t start = pos_;
    while (pos_ < bytes_.size() && bytes_[pos_] != std::byte{'\n'}) ++pos_;
    check(pos_ < bytes_.size(), "a text argument runs to the end of the file (truncated?)");
    std::string s(reinterpret_cast<const char*>(bytes_.data() + start), pos_ - start);
    ++pos_;
    return s;
  }
  uint64_t text_number() {
    const std::string s = line();
    check(!s.empty() && s.size() <= 10 && s.find_first_not_of("0123456789") == std::string::npos,
          "'{}' is not a memo index", s);
    return std::stoull(s);
  }
  Ref text_int() {
    const std::string s = line();
    if (s == "00" || s == "01") return make_int(Kind::kBool, s == "01");
    const bool negative = !s.empty() && s[0] == '-';
    const std::string digits = negative ? s.substr(1) : s;
    check(
        !digits.empty() && digits.size() <= 18 && digits.find_first_not_of("0123456789") == std::string::npos,
        "INT '{}' is not a 64-bit integer", s);
    const auto v = static_cast<int64_t>(std::stoull(digits));
    return make_int(Kind::kInt, negative ? -v : v);
  }
  // LONG1/LONG4: little-endian two's complement of n bytes, at most 8 here.
  int64_t long_bytes(uint64_t n) {
    check(n <= 8, "an integer of {} bytes does not fit 64 bits", n);
    need(n);
    uint64_t v = 0;
    for (uint64_t k = 0; k < n; ++k)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + k])) << (8 * k);
    if (n > 0 && n < 8 && (static_cast<uint8_t>(bytes_[pos_ + n - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * n);
    pos_ += n;
    return static_cast<int64_t>(v);
  }
  // Validates UTF-8 (pickle's text is UTF-8 encoded).
  std::string utf8(std::string s) const {
    for (size_t i = 0; i < s.size();) {
      const auto c = static_cast<uint8_t>(s[i]);
      const int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
      check(extra >= 0 && i + static_cast<size_t>(extra) < s.size(),
            "text is not valid UTF-8 (byte {} of a string)", i);
      for (int k = 1; k <= extra; ++k) {
        check((static_cast<uint8_t>(s[i + k]) & 0xC0) == 0x80,
              "text is not valid UTF-8 (byte {} of a string)", i);
      }
      i += 1 + static_cast<size_t>(extra);
    }
    return s;
  }

  // Bytes made by copying (latin1 text, array data, attribute dicts) are
  // bounded by a multiple of the input, so a small file cannot make memory
  // balloon by referring to one large value many times.
  void charge(uint64_t n) {
    check(n <= budget_, "the values it builds outgrow the file ({} bytes; a repeated reference?)",
          bytes_.size());
    budget_ -= n;
  }

  // --- values
  Ref make(Kind kind) {
    values_.emplace_back();
    values_.back().kind = kind;
    return static_cast<Ref>(values_.size() - 1);
  }
  Ref make_int(Kind kind, int64_t v) {
    Ref r = make(kind);
    values_[r].i = v;
    return r;
  }
  Ref make_text(Kind kind, std::string text) {
    Ref r = make(kind);
    values_[r].text = std::move(text);
    return r;
  }
  std::string describe(Ref r) const {
    const Value& v = values_[r];
    return v.kind == Kind::kGlobal ? "'" + v.text + "'" : std::string("a ") + kind_name(v.kind);
  }
  bool is_global(Ref r, const char* canonical) const {
    return values_[r].kind == Kind::kGlobal && values_[r].text == canonical;
  }
  const std::string& text_of(Ref r, const char* what) const {
    const Value& v = values_[r];
    check(v.kind == Kind::kString || v.kind == Kind::kBytes, "{} is {}, not text", what, describe(r));
    return v.text;
  }

  // --- the stack and the memo
  void push(Ref r) { stack_.push_back(r); }
  Ref top() const {
    check(stack_.size() > (marks_.empty() ? 0 : marks_.back()), "the stack is empty");
    return stack_.back();
  }
  Ref pop() {
    const Ref r = top();
    stack_.pop_back();
    return r;
  }
  std::vector<Ref> pop_mark() {
    check(!marks_.empty(), "no MARK to pop to");
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<Ref> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  Ref tuple_of(size_t n) {
    check(stack_.size() >= n + (marks_.empty() ? 0 : marks_.back()), "TUPLE{} needs {} values on the stack",
          n, n);
    Ref r = make(Kind::kTuple);
    values_[r].items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return r;
  }
  Value& list_at_top() {
    const Ref r = top();
    check(values_[r].kind == Kind::kList, "APPEND to {}", describe(r));
    return values_[r];
  }
  Value& dict_at_top() {
    const Ref r = top();
    check(values_[r].kind == Kind::kDict, "SETITEM on {}", describe(r));
    return values_[r];
  }
  void memo_put(uint64_t index) { memo_[index] = top(); }
  Ref memo_get(uint64_t index) const {
    auto it = memo_.find(index);
    check(it != memo_.end(), "memo entry {} was never stored", index);
    return it->second;
  }

  Ref global(const std::string& module, const std::string& name) {
    for (const AllowedGlobal& g : kAllowed) {
      if (module == g.module && name == g.name) return make_text(Kind::kGlobal, g.canonical);
    }
    fail(
        "'{}.{}' is not allowed (a dataset pickle holds numpy arrays, scipy CSR matrices, lists and "
        "defaultdicts only; nothing else is loaded)",
        module, name);
  }

  const std::vector<Ref>& tuple_items(Ref r, const char* what) const {
    check(values_[r].kind == Kind::kTuple, "the arguments of {} are {}, not a tuple", what, describe(r));
    return values_[r].items;
  }

  Ref reduce(Ref callable, Ref args_ref) {
    const std::vector<Ref>& args = tuple_items(args_ref, "REDUCE");
    if (is_global(callable, "numpy._reconstruct")) {
      check(args.size() == 3 && is_global(args[0], "numpy.ndarray"),
            "numpy's _reconstruct takes (ndarray, shape, typecode)");
      return make(Kind::kArray);
    }
    if (is_global(callable, "numpy.dtype")) {
      check(args.size() >= 1, "numpy.dtype needs a type code");
      std::string code = text_of(args[0], "the dtype's type code");
      check(code.size() == 2 || code.size() == 3, "dtype '{}' is not a numeric type", code);
      if (code.size() == 2) code = "=" + code;  // BUILD sets the byte order
      return make_text(Kind::kDtype, std::move(code));
    }
    if (is_global(callable, "_codecs.encode")) {
      check(args.size() == 2 && text_of(args[1], "the encoding") == "latin1",
            "_codecs.encode is allowed for (text, 'latin1') only");
      const std::string& text = text_of(args[0], "the encoded text");
      charge(text.size());
      return make_text(Kind::kBytes, latin1(text));
    }
    if (is_global(callable, "bytes")) {
      check(args.empty(), "bytes() is allowed without arguments only (b'')");
      return make(Kind::kBytes);
    }
    if (is_global(callable, "copyreg._reconstructor")) {
      check(args.size() == 3 && is_global(args[0], "scipy.csr_matrix") && is_global(args[1], "object") &&
                values_[args[2]].kind == Kind::kNone,
            "copyreg._reconstructor is allowed for (csr_matrix, object, None) only");
      return make(Kind::kObject);
    }
    if (is_global(callable, "collections.defaultdict")) {
      check(args.empty() ||
                (args.size() == 1 && (is_global(args[0], "list") || values_[args[0]].kind == Kind::kNone)),
            "defaultdict is allowed with list (or no) default only");
      return make(Kind::kDict);
    }
    fail("REDUCE calls {} (only the constructors of the allowed classes may be called)", describe(callable));
  }

  // Python 3 writes bytes in protocol 2 as _codecs.encode(text, 'latin1'):
  // every code point of `text` (UTF-8 here) is one byte below 256.
  std::string latin1(const std::string& text) const {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      const auto c = static_cast<uint8_t>(text[i]);
      if (c < 0x80) {
        out.push_back(static_cast<char>(c));
        i += 1;
      } else {
        check((c >> 5) == 0x6 && i + 1 < text.size(), "latin1 text has a code point above 255");
        const unsigned cp = ((c & 0x1Fu) << 6) | (static_cast<uint8_t>(text[i + 1]) & 0x3Fu);
        check(cp < 256, "latin1 text has a code point above 255");
        out.push_back(static_cast<char>(cp));
        i += 2;
      }
    }
    return out;
  }

  void build(Ref target, Ref state) {
    Value& t = values_[target];
    if (t.kind == Kind::kDtype) {
      // (version, byte order, subarray, names, fields, elsize, alignment, flags[, metadata])
      const std::vector<Ref>& s = tuple_items(state, "a dtype's BUILD");
      check(s.size() >= 2, "a dtype's state has {} fields", s.size());
      const std::string order = text_of(s[1], "the dtype's byte order");
      check(order == "<" || order == ">" || order == "|" || order == "=", "byte order '{}'", order);
      values_[target].text[0] = order[0];
      return;
    }
    if (t.kind == Kind::kArray) {
      // (version, shape, dtype, is_fortran, raw data); version 0 omits the first.
      std::vector<Ref> s = tuple_items(state, "an array's BUILD");
      if (s.size() == 5) s.erase(s.begin());
      check(s.size() == 4, "an array's state has {} fields, expected 4 or 5", s.size());
      const std::vector<Ref>& dims = tuple_items(s[0], "the array's shape");
      check(dims.size() <= 8, "an array of {} dimensions", dims.size());
      std::vector<int64_t> shape;
      for (Ref d : dims) {
        check(values_[d].kind == Kind::kInt && values_[d].i >= 0, "a dimension is {}", describe(d));
        shape.push_back(values_[d].i);
      }
      check(values_[s[1]].kind == Kind::kDtype, "the array's dtype is {}", describe(s[1]));
      const std::string descr = values_[s[1]].text;
      const NpyHeader h = numeric_header(descr, shape);  // its byte size checked against overflow
      const Value& data = values_[s[3]];
      check(data.kind == Kind::kBytes || data.kind == Kind::kString,
            "the array's data is {} (object arrays are "
            "not supported)",
            describe(s[3]));
      check(h.data_bytes() == data.text.size(),
            "the array's shape {} of {} ({} bytes each) does not match its {} data bytes", h.count(), descr,
            h.itemsize, data.text.size());
      charge(data.text.size());
      Value& a = values_[target];
      a.shape = std::move(shape);
      a.dtype = s[1];
      a.fortran = values_[s[2]].kind == Kind::kBool || values_[s[2]].kind == Kind::kInt ? values_[s[2]].i != 0
                                                                                        : false;
      a.text = values_[s[3]].text;
      return;
    }
    if (t.kind == Kind::kObject) {
      check(values_[state].kind == Kind::kDict, "a csr_matrix's state is {}, not a dict", describe(state));
      charge(values_[state].items.size() * sizeof(Ref));
      std::vector<Ref> items = values_[state].items;
      values_[target].items = std::move(items);
      return;
    }
    fail("BUILD on {}", describe(target));
  }

  // The header of a numeric array ("<f4", "|b1") of `shape`, by the .npy
  // reader's dtype and size rule (make_npy_header).
  NpyHeader numeric_header(const std::string& descr, const std::vector<int64_t>& shape) const {
    NpyHeader h;
    try {
      h = make_npy_header(descr, false, shape, "the array");
    } catch (const Error& e) {
      fail("{}", e.what());
    }
    check(h.dtype != DType::kBytes, "dtype '{}' is not a numeric type", descr);
    return h;
  }

  std::span<const std::byte> bytes_;
  const std::string& what_;
  std::vector<Value>& values_;
  size_t pos_ = 0, op_at_ = 0;
  uint64_t budget_ = 8 * static_cast<uint64_t>(bytes_.size()) + (uint64_t{1} << 20);
  std::vector<Ref> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Ref> memo_;
};

}  // namespace

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kBytes:
      return "bytes";
    case Kind::kString:
      return "str";
    case Kind::kTuple:
      return "tuple";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kGlobal:
      return "class";
    case Kind::kArray:
      return "numpy array";
    case Kind::kDtype:
      return "numpy dtype";
    case Kind::kObject:
      return "csr_matrix";
  }
  return "?";
}

const Value& Pickle::expect(Ref r, Kind kind, const std::string& field) const {
  const Value& v = at(r);
  DGCN_CHECK(v.kind == kind, "{}: {} is a {}, expected a {}", what_, field, kind_name(v.kind),
             kind_name(kind));
  return v;
}

int64_t Pickle::as_int(Ref r, const std::string& field) const {
  const Value& v = at(r);
  DGCN_CHECK(v.kind == Kind::kInt || v.kind == Kind::kBool, "{}: {} is a {}, expected an int", what_, field,
             kind_name(v.kind));
  return v.i;
}

const Ref* Pickle::find(Ref r, const std::string& key) const {
  const Value& v = at(r);
  if (v.kind != Kind::kDict && v.kind != Kind::kObject) return nullptr;
  for (size_t k = 0; k + 1 < v.items.size(); k += 2) {
    const Value& name = at(v.items[k]);
    if ((name.kind == Kind::kString || name.kind == Kind::kBytes) && name.text == key) return &v.items[k + 1];
  }
  return nullptr;
}

Pickle load(std::span<const std::byte> bytes, const std::string& what) {
  Pickle p;
  p.what_ = what;
  Machine machine(bytes, p.what_, p.values_);
  p.root_ = machine.run();
  return p;
}

}  // namespace dgcn::detail::pickle
