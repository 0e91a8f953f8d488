#include "models/precision.h"

#include <fmt/format.h>

#include "base/error.h"

namespace dgcn {

const char* precision_name(Precision p) {
  return p == Precision::kBf16 ? "bf16" : "fp32";
}

Precision parse_precision(const std::string& s) {
  if (s == "fp32") return Precision::kFp32;
  if (s == "bf16") return Precision::kBf16;
  throw Error(fmt::format("precision: unknown precision '{}' (expected 'fp32' or 'bf16')", s));
}

}  // namespace dgcn
