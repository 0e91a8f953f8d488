// `dgcn-prep load-bench FILE`: how long a store takes to load and how much
// memory a process holds afterwards, in private mode and in shared-cache mode
// (cold: this load builds the cache; warm: it maps the cache another process
// built). Each measurement runs in a fresh child process (this binary again,
// with a hidden --child-mode), so peak-RSS numbers are not mixed. Prints one
// JSON object.
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "apps/cli/cli.h"
#include "apps/prep/prep.h"
#include "base/atomic_file.h"
#include "base/parallel.h"
#include "graph/store_format.h"

namespace dgcn::prep {

namespace {

struct BenchOptions {
  std::string file;
  std::string cache_dir;  // empty: a temporary directory next to the file, removed afterwards
  int threads = 0;
  std::string child_mode;  // hidden: "private" or "shared" runs one load and prints its numbers
};

// kB fields of /proc/self/status, in MiB; -1 when absent.
double status_mib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) / 1024.0;
  }
  return -1;
}

double gbps(uint64_t bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / 1e9 : 0.0;
}

void run_child(const BenchOptions& o) {
  LoadOptions load;
  load.mode = o.child_mode == "shared" ? LoadMode::kSharedCache : LoadMode::kPrivate;
  load.cache_dir = o.cache_dir;
  load.threads = o.threads;
  LoadStats st;
  const GraphStore store = load_store(o.file, load, &st);  // held while memory is read
  nlohmann::json j = {{"seconds", st.seconds},
                      {"frames_seconds", st.frames_seconds},
                      {"validate_seconds", st.validate_seconds},
                      {"frames_gbps", gbps(st.raw_bytes, st.frames_seconds)},
                      {"decompressed_bytes", st.decompressed_bytes},
                      {"decompress_gbps_per_thread", gbps(st.decompressed_bytes, st.decompress_cpu_seconds)},
                      {"checksum_gbps_per_thread", gbps(st.checksummed_bytes, st.checksum_cpu_seconds)},
                      {"mapped", st.mapped},
                      {"built_cache", st.built_cache},
                      {"peak_rss_mib", status_mib("VmHWM")},
                      {"rss_anon_mib", status_mib("RssAnon")},
                      {"rss_file_mib", status_mib("RssFile")},
                      {"num_nodes", store.num_nodes()}};
  std::printf("%s\n", j.dump().c_str());
}

// Runs this binary as `load-bench FILE --child-mode MODE ...` and returns its JSON.
nlohmann::json measure_in_child(const BenchOptions& o, const std::string& mode) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> args = {
      self, "load-bench", o.file, "--child-mode", mode, "--threads", std::to_string(o.threads)};
  if (!o.cache_dir.empty()) args.insert(args.end(), {"--cache-dir", o.cache_dir});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2];
  DGCN_CHECK(pipe(out) == 0, "load-bench: pipe failed");
  std::fflush(stdout);
  pid_t pid = fork();
  DGCN_CHECK(pid >= 0, "load-bench: fork failed");
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  ssize_t got;
  while ((got = read(out[0], buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(got));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  DGCN_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "load-bench: the {} load of {} failed (status {})", mode, o.file, status);
  return nlohmann::json::parse(text);
}

void run_bench(BenchOptions o) {
  namespace fs = std::filesystem;
  const StoreHeader h = read_store_header(o.file);
  // A scratch cache folder that is never committed: its destructor, or
  // SIGINT/SIGTERM, removes it with the cache inside.
  std::optional<AtomicFolder> scratch;
  if (o.cache_dir.empty()) {
    scratch.emplace((fs::absolute(o.file).parent_path() / ".dgcn-load-bench").string());
    o.cache_dir = scratch->path();
  } else {
    // Cold means no cache yet: remove this file's cache (and only it).
    fs::remove(shared_cache_path(o.file, o.cache_dir));
  }
  nlohmann::json j = {{"file", o.file},
                      {"file_bytes", h.file_size},
                      {"raw_bytes", h.raw_bytes()},
                      {"source_all_raw", h.all_raw()},
                      {"threads", resolve_threads(o.threads)},
                      {"note",
                       "cold = no cache file yet (the page cache is not dropped); each mode runs in a "
                       "fresh process; rss_file is shared page cache, rss_anon is private memory"}};
  spdlog::info("load-bench: private load of {}", o.file);
  j["private"] = measure_in_child(o, "private");
  spdlog::info("load-bench: shared-cache load, cold");
  j["shared_cold"] = measure_in_child(o, "shared");
  spdlog::info("load-bench: shared-cache load, warm");
  j["shared_warm"] = measure_in_child(o, "shared");
  scratch.reset();
  std::printf("%s\n", j.dump().c_str());
}

}  // namespace

void register_load_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "load-bench",
      "measure load time, decompression and checksum speed and memory of a .gcn file in private and "
      "shared-cache mode (each in a fresh process); prints one JSON object");
  cmd->add_option("file", o->file, "the .gcn file")->required();
  cmd->add_option("--cache-dir", o->cache_dir,
                  "where the shared cache goes (its existing cache for FILE is removed first); unset: a "
                  "temporary directory next to FILE, removed afterwards");
  cmd->add_option("--threads", o->threads, "threads per load (0 = all cores)")
      ->check(dgcn::cli::kNonNegative);
  cmd->add_option("--child-mode", o->child_mode)->check(CLI::IsMember({"private", "shared"}))->group("");
  cmd->callback([o] {
    if (o->child_mode.empty()) {
      run_bench(*o);
    } else {
      set_interrupt_note("", "", "");  // the parent says it, once
      run_child(*o);
    }
  });
}

}  // namespace dgcn::prep
