// One convention for every dgcn binary's command line (CLI11 underneath):
// --version, defaults shown the same way in --help (NAME=default), usage
// errors that name the flag and the accepted values and exit with status 2,
// the same syntax for the same things (--num-neighbors 15,10,5, --device
// cpu|cuda|cuda:N), and output paths checked before any work starts.
//
//   CLI::App app{"dgcn-foo: ..."};
//   dgcn::cli::setup(app, "dgcn-foo");
//   dgcn::cli::add_fanouts(app, "--num-neighbors", fanouts, "Fanouts, one per GCN layer");
//   if (auto code = dgcn::cli::parse(app, argc, argv)) return *code;
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace dgcn::cli {

// The exit status of a usage error (a bad flag or value); 1 is left for
// errors of the input data or of the run.
inline constexpr int kUsageError = 2;

// --version ("<binary> <version>") and defaults captured for --help. Call
// before adding options (subcommands inherit it).
void setup(CLI::App& app, const std::string& binary);

// A usage error found after parsing (an output that cannot be written, a
// combination of flags): main's error ladder exits with kUsageError.
class UsageError : public Error {
 public:
  using Error::Error;
};

// The text of an exception for the user; torch mains pass torch_message
// (apps/cli/torch_cli.h), which leaves out c10's C++ backtrace.
using MessageOf = std::string (*)(const std::exception&);
std::string plain_message(const std::exception& e);

// The one error ladder of every main: runs `body` and returns its status;
// an exception escaping it is printed once as "<binary>: error: <message>"
// and ends with kUsageError for a UsageError or CLI11's usage errors, 1 for
// any other (a failure of the data or the run).
int run_main(const std::string& binary, const std::function<int()>& body, MessageOf message = plain_message);

// Parses argv: nullopt to go on, else the exit status (0 after --help or
// --version, kUsageError after printing a usage error to stderr).
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);
// For callers that parse themselves (dgcn-prep runs subcommands inside
// parse): the status for a CLI11 error, after printing it.
int exit_status(CLI::App& app, const CLI::ParseError& e);

// Value checks whose messages read "must be > 0" instead of printing the
// type's largest value.
extern const CLI::Validator kPositive;     // > 0
extern const CLI::Validator kNonNegative;  // >= 0

// A comma-separated list of fanouts, one per GCN layer, hop 0 first: each an
// integer >= -1 (-1: every neighbour, 0: none). "15,,5", "15,x" and "" are
// errors naming the element.
CLI::Option* add_fanouts(CLI::App& app, const std::string& name, std::vector<int64_t>& fanouts,
                         const std::string& help);
// The parser behind add_fanouts; throws CLI::ValidationError.
std::vector<int64_t> parse_fanouts(const std::string& text);

// A comma-separated list of numbers in one argument (--threads 1,2), the one
// list syntax of every binary: in "--threads 1 2" the 2 is an unexpected
// argument, a usage error. "1,,2", "1,x" and an element below `at_least` are
// errors naming the element.
template <class T>
std::vector<T> parse_list(const std::string& text, T at_least = std::numeric_limits<T>::lowest()) {
  const std::string expected = "expected comma-separated numbers, e.g. 1,2";
  if (text.empty()) throw CLI::ValidationError("the list is empty; " + expected);
  std::vector<T> out;
  size_t begin = 0;
  for (int element = 1;; ++element) {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    T v{};
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size()) {
      throw CLI::ValidationError("'" + text + "': element " + std::to_string(element) + " '" + item +
                                 "' is not a number; " + expected);
    }
    if (v < at_least) {
      throw CLI::ValidationError("'" + text + "': element " + std::to_string(element) + " '" + item +
                                 "' must be >= " + CLI::detail::to_string(at_least));
    }
    out.push_back(v);
    if (end == text.size()) return out;
    begin = end + 1;
  }
}

template <class T>
CLI::Option* add_list(CLI::App& app, const std::string& name, std::vector<T>& values, const std::string& help,
                      T at_least = std::numeric_limits<T>::lowest()) {
  std::string shown;
  for (const T& v : values) shown += (shown.empty() ? "" : ",") + CLI::detail::to_string(v);
  CLI::Option* opt = app.add_option_function<std::string>(
      name, [&values, at_least](const std::string& text) { values = parse_list<T>(text, at_least); }, help);
  opt->type_name("LIST");
  if (!shown.empty()) opt->default_str(shown);
  opt->check(CLI::Validator(  // at parse time: a usage error naming the flag
      [at_least](std::string& text) {
        try {
          parse_list<T>(text, at_least);
        } catch (const CLI::ValidationError& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      ""));
  return opt;
}

// --device cpu|cuda|cuda:N, kept as typed; device_index() tells them apart.
CLI::Option* add_device(CLI::App& app, std::string& device, const std::string& help);
// -1 for "cpu", N for "cuda:N", `default_cuda` for "cuda".
int device_index(const std::string& device, int default_cuda);

// Checks, before any work, that `path` can be written as a file: its folder
// exists and is writable, and it is not a folder itself. Throws UsageError
// "<flag> PATH: <why>".
void check_output_file(const std::string& flag, const std::string& path);
// The same for a folder that is created when missing (its parent must then
// exist and be writable).
void check_output_folder(const std::string& flag, const std::string& path);

}  // namespace dgcn::cli
