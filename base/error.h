// The one exception type of dgcn's torch-free code, and the checks that throw it.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace dgcn {

// Messages say what was being done, on what, and the values seen, e.g.
//   "gcn file data/x.gcn: section 'indices': checksum mismatch (stored 1f.., computed 9a..)".
// Never "bad input".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dgcn

// A user-facing check: the condition is about the input, not about our code.
#define DGCN_CHECK(cond, ...)                          \
  do {                                                 \
    if (!(cond)) [[unlikely]] {                        \
      throw ::dgcn::Error(::fmt::format(__VA_ARGS__)); \
    }                                                  \
  } while (0)

// An internal invariant: failing it is a bug in dgcn.
#define DGCN_ASSERT(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) [[unlikely]] {                                                                    \
      throw ::dgcn::Error(::fmt::format("internal error: {} ({}:{})", #cond, __FILE__, __LINE__)); \
    }                                                                                              \
  } while (0)
