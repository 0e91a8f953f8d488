// `dgcn-prep verify FILE`: checks every frame checksum of a .gcn file and
// prints a per-section report; exits 1 naming the first damaged section.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "graph/store_format.h"

namespace dgcn::prep {

namespace {

struct VerifyOptions {
  std::string file;
  int threads = 0;
};

void run_verify(const VerifyOptions& o) {
  const VerifyReport r = verify_store(o.file, o.threads);
  nlohmann::json sections = nlohmann::json::array();
  uint64_t raw = 0;
  for (const auto& s : r.sections) {
    nlohmann::json j = {{"name", s.name},
                        {"codec", codec_name(s.codec)},
                        {"stored_bytes", s.stored_bytes},
                        {"raw_bytes", s.raw_bytes},
                        {"frames", s.frames},
                        {"bad_frames", s.bad_frames},
                        {"ok", s.ok()}};
    if (!s.ok()) j["error"] = s.first_error;
    sections.push_back(std::move(j));
    raw += s.raw_bytes;
  }
  nlohmann::json j = {{"path", r.path},   {"ok", r.ok()},         {"file_bytes", r.file_bytes},
                      {"raw_bytes", raw}, {"seconds", r.seconds}, {"sections", sections}};
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
  for (const auto& s : r.sections) {
    DGCN_CHECK(s.ok(), "{} ({} of {} frames of section '{}' are damaged)", s.first_error, s.bad_frames,
               s.frames, s.name);
  }
  spdlog::info("{}: all {} sections intact ({:.2f} GB decoded in {:.2f} s)", r.path, r.sections.size(),
               raw / 1e9, r.seconds);
}

}  // namespace

void register_verify(CLI::App& app) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "decode every section of a .gcn file and check every frame checksum; prints a per-section JSON "
      "report and exits 1 if any frame is damaged");
  cmd->add_option("file", o->file, "the .gcn file")->required();
  cmd->add_option("--threads", o->threads, "threads (0 = all cores)")->check(dgcn::cli::kNonNegative);
  cmd->callback([o] { run_verify(*o); });
}

}  // namespace dgcn::prep
