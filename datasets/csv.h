// Number fields of text layouts (OGB's CSV files, edge lists): whole-field
// parsing with std::from_chars (locale-free, correctly rounded, no allocation)
// and helpers that make error messages show the offending text.
#pragma once

#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace dgcn {

// True when all of `text` is one number of type T (no spaces, no '+').
// Floats accept what from_chars accepts ("1", "-2.5e-3", "nan", "inf").
template <class T>
bool parse_number(std::string_view text, T& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// Outcome of parse_csv_row: `fields` numbers were stored before it stopped;
// for kBadNumber, `bad_field` is the text of the field that failed.
struct CsvRowResult {
  enum Kind { kOk, kBadNumber, kTooFew, kTooMany } kind = kOk;
  int64_t fields = 0;
  std::string_view bad_field;
  bool ok() const { return kind == kOk; }
};

// Parses a line of `sep`-separated numbers into `out`, which must be filled
// exactly: fewer or more fields than out.size() is a failure.
template <class T>
CsvRowResult parse_csv_row(std::string_view line, std::span<T> out, char sep = ',') {
  CsvRowResult r;
  const char* p = line.data();
  const char* end = p + line.size();
  for (size_t i = 0; i < out.size(); ++i) {
    const char* field_end = p;
    while (field_end < end && *field_end != sep) ++field_end;
    auto [ptr, ec] = std::from_chars(p, field_end, out[i]);
    if (ec != std::errc() || ptr != field_end || p == field_end) {
      r.kind = CsvRowResult::kBadNumber;
      r.bad_field = std::string_view(p, static_cast<size_t>(field_end - p));
      return r;
    }
    ++r.fields;
    if (field_end == end) {
      if (i + 1 < out.size()) r.kind = CsvRowResult::kTooFew;
      return r;
    }
    p = field_end + 1;
  }
  r.kind = CsvRowResult::kTooMany;  // a separator follows the last expected field
  return r;
}

// Number of `sep`-separated fields of a line ("" has 0).
inline int64_t count_fields(std::string_view line, char sep = ',') {
  if (line.empty()) return 0;
  int64_t n = 1;
  for (char c : line) n += c == sep;
  return n;
}

// What was wrong with a row that parse_csv_row rejected, for an error
// message: "field 3 is 'abc', not a number", "has 99 fields, expected 100".
std::string describe_row_error(const CsvRowResult& result, std::string_view line, size_t expected);

// `text` for an error message: quoted, control characters escaped, cut
// after 60 characters ("'1.5,ab'", "'aaaa...' (900 bytes)").
std::string quote_value(std::string_view text);

// Reads a (gzip or plain) text file that must hold exactly one non-negative
// integer on one line, e.g. OGB's num-node-list.csv.gz.
int64_t read_single_count(const std::string& path);

}  // namespace dgcn
