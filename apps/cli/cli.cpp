#include "apps/cli/cli.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "base/version.h"

namespace dgcn::cli {
namespace {

namespace fs = std::filesystem;

CLI::Validator number_check(const char* description, bool (*ok)(double), const char* requirement) {
  return CLI::Validator(
      [ok, requirement](std::string& input) -> std::string {
        double v = 0;
        const char* begin = input.data();
        const auto [ptr, ec] = std::from_chars(begin, begin + input.size(), v);
        if (ec != std::errc() || ptr != begin + input.size()) return "'" + input + "' is not a number";
        return ok(v) ? std::string() : "'" + input + "' " + requirement;
      },
      description);
}

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

void check_writable_folder(const std::string& flag, const std::string& path, const std::string& folder) {
  std::error_code ec;
  DGCN_CHECK(fs::exists(folder, ec), "{} {}: the folder {} does not exist", flag, path, folder);
  DGCN_CHECK(fs::is_directory(folder, ec), "{} {}: {} is not a folder", flag, path, folder);
  DGCN_CHECK(::access(folder.c_str(), W_OK | X_OK) == 0, "{} {}: the folder {} is not writable", flag, path,
             folder);
}

}  // namespace

const CLI::Validator kPositive = number_check(
    "> 0", [](double v) { return v > 0; }, "must be > 0");
const CLI::Validator kNonNegative = number_check(
    ">= 0", [](double v) { return v >= 0; }, "must be >= 0");

void setup(CLI::App& app, const std::string& binary) {
  app.set_version_flag(
      "--version", binary + " " + dgcn_version() + "\n" + build_description(),
      "Print the version, the LibTorch and whether CUDA, cuSPARSE and NCCL are compiled in, and exit");
  app.option_defaults()->always_capture_default();
  // A flag given twice: the last one counts (a script's defaults, then the user's).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

int exit_status(CLI::App& app, const CLI::ParseError& e) {
  const int code = app.exit(e);  // prints help, version or the error with "Run with --help"
  return code == 0 ? 0 : kUsageError;
}

std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return exit_status(app, e);
  }
  return std::nullopt;
}

std::vector<int64_t> parse_fanouts(const std::string& text) {
  const std::string expected = "expected comma-separated integers >= -1, one per layer, e.g. 15,10,5";
  if (text.empty()) throw CLI::ValidationError("the list is empty; " + expected);
  std::vector<int64_t> out;
  size_t begin = 0;
  for (int element = 1;; ++element) {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty()) {
      throw CLI::ValidationError("'" + text + "': element " + std::to_string(element) + " is empty; " +
                                 expected);
    }
    if (ec != std::errc() || ptr != item.data() + item.size() || v < -1) {
      throw CLI::ValidationError("'" + text + "': element " + std::to_string(element) + " '" + item +
                                 "' is not an integer >= -1; " + expected);
    }
    out.push_back(v);
    if (end == text.size()) break;
    begin = end + 1;
  }
  return out;
}

CLI::Option* add_fanouts(CLI::App& app, const std::string& name, std::vector<int64_t>& fanouts,
                         const std::string& help) {
  std::string shown;
  for (int64_t f : fanouts) shown += (shown.empty() ? "" : ",") + std::to_string(f);
  CLI::Option* opt = app.add_option_function<std::string>(
      name, [&fanouts](const std::string& text) { fanouts = parse_fanouts(text); }, help);
  opt->type_name("LIST");
  if (!shown.empty()) opt->default_str(shown);
  // Validate at parse time, so a bad list is a usage error naming the flag.
  opt->check(CLI::Validator(
      [](std::string& text) {
        try {
          parse_fanouts(text);
        } catch (const CLI::ValidationError& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      ""));
  return opt;
}

CLI::Option* add_device(CLI::App& app, std::string& device, const std::string& help) {
  return app.add_option("--device", device, help)
      ->check(CLI::Validator(
          [](std::string& d) -> std::string {
            if (d == "cpu" || d == "cuda") return {};
            int index = -1;
            if (d.rfind("cuda:", 0) == 0) {
              const char* b = d.data() + 5;
              const auto [ptr, ec] = std::from_chars(b, d.data() + d.size(), index);
              if (ec == std::errc() && ptr == d.data() + d.size() && index >= 0) return {};
            }
            return "'" + d + "' is not a device; expected cpu, cuda or cuda:N";
          },
          "cpu|cuda|cuda:N"));
}

int device_index(const std::string& device, int default_cuda) {
  if (device == "cpu") return -1;
  if (device == "cuda") return default_cuda;
  return std::stoi(device.substr(5));
}

void check_output_file(const std::string& flag, const std::string& path) {
  DGCN_CHECK(!path.empty(), "{}: the path is empty", flag);
  std::error_code ec;
  DGCN_CHECK(!fs::is_directory(path, ec), "{} {}: is a folder, expected a file name", flag, path);
  check_writable_folder(flag, path, folder_of(path));
  DGCN_CHECK(!fs::exists(path, ec) || ::access(path.c_str(), W_OK) == 0, "{} {}: the file is not writable",
             flag, path);
}

void check_output_folder(const std::string& flag, const std::string& path) {
  DGCN_CHECK(!path.empty(), "{}: the path is empty", flag);
  std::error_code ec;
  if (fs::exists(path, ec)) {
    DGCN_CHECK(fs::is_directory(path, ec), "{} {}: exists and is not a folder", flag, path);
    check_writable_folder(flag, path, path);
    return;
  }
  fs::path p(path);
  if (!p.has_filename()) p = p.parent_path();  // "ckpt/" names the folder "ckpt"
  check_writable_folder(flag, path, folder_of(p.string()));
}

}  // namespace dgcn::cli
