#include "datasets/csv.h"

#include <fmt/format.h>

#include <vector>

#include "base/error.h"
#include "datasets/line_chunks.h"

namespace dgcn {

std::string quote_value(std::string_view text) {
  constexpr size_t kShown = 60;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += text.size() > kShown ? fmt::format("...' ({} bytes)", text.size()) : "'";
  return out;
}

std::string describe_row_error(const CsvRowResult& result, std::string_view line, size_t expected) {
  switch (result.kind) {
    case CsvRowResult::kOk:
      return "is fine";
    case CsvRowResult::kBadNumber:
      return fmt::format("field {} is {}, not a number", result.fields + 1, quote_value(result.bad_field));
    case CsvRowResult::kTooFew:
    case CsvRowResult::kTooMany:
      break;
  }
  return fmt::format("has {} fields, expected {}", count_fields(line), expected);
}

int64_t read_single_count(const std::string& path) {
  LineChunkReader reader(path, 4096);
  LineChunk chunk;
  std::vector<std::pair<int64_t, std::string>> lines;  // the file is a few bytes
  while (reader.next(chunk)) {
    for_each_line(chunk, [&](int64_t line, std::string_view text) {
      if (!text.empty()) lines.emplace_back(line, std::string(text));
      DGCN_CHECK(lines.size() <= 1, "{}: line {}: expected one count, found another line {}", path, line,
                 quote_value(text));
    });
  }
  DGCN_CHECK(!lines.empty(), "{}: empty, expected one count", path);
  int64_t value = 0;
  DGCN_CHECK(parse_number(lines[0].second, value) && value >= 0,
             "{}: line {} is {}, expected a non-negative integer", path, lines[0].first,
             quote_value(lines[0].second));
  return value;
}

}  // namespace dgcn
