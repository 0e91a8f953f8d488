#include "apps/cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/error_report.h"
#include "base/version.h"
#include "graph/file_kind.h"

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

void check_output_file_or_throw(const std::string& flag, const std::string& path) {
  DGCN_CHECK(!path.empty(), "{}: the path is empty", flag);
  std::error_code ec;
  DGCN_CHECK(!fs::is_directory(path, ec), "{} {}: is a folder, expected a file name", flag, path);
  check_writable_folder(flag, path, folder_of(path));
  DGCN_CHECK(!fs::exists(path, ec) || ::access(path.c_str(), W_OK) == 0, "{} {}: the file is not writable",
             flag, path);
}

void check_output_folder_or_throw(const std::string& flag, const std::string& path) {
  DGCN_CHECK(!path.empty(), "{}: the path is empty", flag);
  std::error_code ec;
  if (fs::exists(path, ec)) {
    // The reverse of file_kind_hint's case (a store where a folder is due).
    DGCN_CHECK(fs::is_directory(path, ec) || file_kind(path) != FileKind::kStore,
               "{} {}: is a .gcn graph store, not a folder (a store is read with --data; {} names a folder)",
               flag, path, flag);
    DGCN_CHECK(fs::is_directory(path, ec), "{} {}: exists and is not a folder", flag, path);
    check_writable_folder(flag, path, path);
    return;
  }
  fs::path p(path);
  if (!p.has_filename()) p = p.parent_path();  // "ckpt/" names the folder "ckpt"
  check_writable_folder(flag, path, folder_of(p.string()));
}

// Runs a check of an output path; its dgcn::Error becomes a UsageError.
template <class F>
void as_usage_error(F&& check) {
  try {
    check();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

// Edit distance between two flag names (insertions, deletions, substitutions).
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "; did you mean --num-neighbors?" for a mistyped flag close to one the
// (sub)command takes, else "".
std::string did_you_mean(CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return "";
  CLI::App* target = &app;
  while (!target->get_subcommands().empty()) target = target->get_subcommands().front();
  const std::string message = e.what();
  std::string out;
  for (size_t at = message.find("--"); at != std::string::npos; at = message.find("--", at + 2)) {
    const size_t end = message.find_first_of(" =,", at);
    const std::string typed =
        message.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
    std::string best;
    size_t best_distance = std::max<size_t>(2, typed.size() / 4) + 1;
    for (const CLI::Option* option : target->get_options()) {
      for (const std::string& name : option->get_lnames()) {
        // A flag cut short (--batch for --batch-size) is as near as one typo.
        const size_t d = typed.size() >= 3 && name.rfind(typed, 0) == 0 ? 1 : edit_distance(typed, name);
        if (d < best_distance) best_distance = d, best = name;
      }
    }
    if (!best.empty()) out += "; did you mean --" + best + "?";
  }
  return out;
}

}  // namespace

const CLI::Validator kPositive = number_check(
    "> 0", [](double v) { return v > 0; }, "must be > 0");
const CLI::Validator kNonNegative = number_check(
    ">= 0", [](double v) { return v >= 0; }, "must be >= 0");

void setup(CLI::App& app, const std::string& binary) {
  app.name(binary);
  app.set_version_flag(
      "--version", binary + " " + dgcn_version() + "\n" + build_description() + "\n" + cpu_bf16_description(),
      "Print the version, the LibTorch, whether CUDA, cuSPARSE and NCCL are compiled in and whether this "
      "CPU has bf16 instructions, and exit");
  app.option_defaults()->always_capture_default();
  // A flag given twice: the last one counts (a script's defaults, then the user's).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

int exit_status(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
  const std::string binary = app.get_name().empty() ? "dgcn" : app.get_name();
  std::cerr << binary << ": error: " << e.what() << did_you_mean(app, e) << " (" << binary
            << " --help lists the flags)\n";
  return kUsageError;
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

std::string plain_message(const std::exception& e) {
  return e.what();
}

namespace {

// One line per error, sent to the launcher or printed in one write(2) (Note
// [One error per job] in base/error_report.h).
void print_error(const std::string& binary, const std::string& what) {
  report_error_line(binary + ": error: " + what + "\n");
}

}  // namespace

int run_main(const std::string& binary, const std::function<int()>& body, MessageOf message) {
  try {
    return body();
  } catch (const CLI::ParseError& e) {
    print_error(binary, e.what());
    return kUsageError;
  } catch (const UsageError& e) {
    print_error(binary, message(e));
    return kUsageError;
  } catch (const std::exception& e) {
    print_error(binary, message(e));
    return 1;
  }
}

void check_output_file(const std::string& flag, const std::string& path) {
  as_usage_error([&] { check_output_file_or_throw(flag, path); });
}

void check_output_folder(const std::string& flag, const std::string& path) {
  as_usage_error([&] { check_output_folder_or_throw(flag, path); });
}

}  // namespace dgcn::cli
