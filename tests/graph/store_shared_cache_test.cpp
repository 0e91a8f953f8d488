// LoadMode::kSharedCache: one raw cache per source, built once however many
// processes ask at the same moment, mapped read-only by all of them, and
// rebuilt when stale or damaged.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "fixtures.h"
#include "graph/store_format.h"
#include "store_test_util.h"

namespace dgcn {
namespace {

using testing::digest_of;
using testing::ScratchDir;

using testing::contains;

SaveOptions zstd_frames() {
  SaveOptions o;
  o.threads = 2;
  o.frame_bytes = 512;
  o.zstd_min_bytes = 0;
  return o;
}

LoadOptions shared(const std::string& cache_dir) {
  LoadOptions o;
  o.mode = LoadMode::kSharedCache;
  o.cache_dir = cache_dir;
  o.threads = 2;
  return o;
}

// Forks `n` processes that load `path` in shared mode at the same moment;
// returns each one's line: "built|reused <digest> <mapped path>" or "error <message>".
std::vector<std::string> load_in_processes(const std::string& path, const std::string& cache_dir, int n) {
  int start[2];
  EXPECT_EQ(pipe(start), 0);
  std::vector<pid_t> pids;
  std::vector<int> outs;
  for (int i = 0; i < n; ++i) {
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(start[1]);
      close(out[0]);
      char c;
      (void)!read(start[0], &c, 1);  // returns (EOF) when the parent releases everyone
      std::string line;
      try {
        LoadStats st;
        GraphStore s = load_store(path, shared(cache_dir), &st);
        line = fmt::format("{} {} {}", st.built_cache ? "built" : "reused", digest_of(s), st.mapped_path);
      } catch (const std::exception& e) {
        line = std::string("error ") + e.what();
      }
      (void)!write(out[1], line.data(), line.size());
      _exit(0);
    }
    close(out[1]);
    pids.push_back(pid);
    outs.push_back(out[0]);
  }
  close(start[0]);
  close(start[1]);
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    std::string line;
    char buf[4096];
    ssize_t got;
    while ((got = read(outs[i], buf, sizeof(buf))) > 0) line.append(buf, static_cast<size_t>(got));
    close(outs[i]);
    int status = 0;
    waitpid(pids[i], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << i << " status " << status;
    lines.push_back(line);
  }
  return lines;
}

TEST(StoreSharedCache, ConcurrentProcessesBuildOneCacheAndShareIt) {
  GraphStore s = testing::make_store(testing::cycle_edges(5000), 8, 5);
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  save_store(s, path, zstd_frames());
  const std::string cache_dir = dir.file("cache");
  const std::string cache = shared_cache_path(path, cache_dir);

  std::vector<std::string> lines = load_in_processes(path, cache_dir, 4);
  int built = 0;
  for (const auto& line : lines) {
    EXPECT_TRUE(contains(line, " " + digest_of(s) + " " + cache)) << line;
    built += line.rfind("built ", 0) == 0;
  }
  EXPECT_EQ(built, 1);
  // The cache and its lock file, no temporary left over.
  const std::string name = std::filesystem::path(cache).filename().string();
  std::vector<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(cache_dir))
    entries.push_back(e.path().filename().string());
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{name, name + ".lock"}));

  // A later process reuses it.
  lines = load_in_processes(path, cache_dir, 1);
  EXPECT_EQ(lines[0].rfind("reused ", 0), 0u) << lines[0];
  EXPECT_TRUE(read_store_header(cache).all_raw());
}

// The [start, end) ranges of /proc/self/maps lines that map `file`.
bool is_mapped_from(const void* p, const std::string& file) {
  const std::string want = std::filesystem::canonical(file).string();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, name;
    in >> range >> perms >> offset >> dev >> inode >> name;
    const uintptr_t begin = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    if (addr >= begin && addr < end) return name == want && perms.rfind("r--s", 0) == 0;
  }
  return false;
}

TEST(StoreSharedCache, ArraysAreReadOnlyViewsOfTheCacheMapping) {
  GraphStore s = testing::make_store(testing::cycle_edges(2000), 8, 5);
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  save_store(s, path, zstd_frames());
  LoadStats st;
  GraphStore back = load_store(path, shared(""), &st);
  EXPECT_TRUE(st.built_cache);
  EXPECT_TRUE(st.mapped);
  EXPECT_EQ(st.mapped_path, path + ".cache");  // next to the file without a cache dir
  EXPECT_EQ(digest_of(back), digest_of(s));
  const GraphStore& view = back;
  for (const Buffer* b : {&view.graph.indptr_buffer(), &view.graph.indices_buffer(), &view.features,
                          &view.labels, &view.train, &view.degree}) {
    EXPECT_TRUE(is_mapped_from(b->data(), path + ".cache"));
  }
}

TEST(StoreSharedCache, AllRawSourceIsMappedInPlace) {
  GraphStore s = testing::make_store(testing::cycle_edges(2000), 8, 5);
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  SaveOptions raw = zstd_frames();
  raw.all_raw = true;
  save_store(s, path, raw);
  LoadStats st;
  GraphStore back = load_store(path, shared(dir.file("cache")), &st);
  EXPECT_FALSE(st.built_cache);
  EXPECT_EQ(st.mapped_path, path);
  EXPECT_TRUE(is_mapped_from(back.features.data(), path));
  EXPECT_EQ(digest_of(back), digest_of(s));
  EXPECT_FALSE(std::filesystem::exists(dir.file("cache")));
}

TEST(StoreSharedCache, StaleCacheIsRebuilt) {
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  save_store(testing::make_store(testing::cycle_edges(2000), 8, 5), path, zstd_frames());
  LoadStats st;
  load_store(path, shared(""), &st);
  ASSERT_TRUE(st.built_cache);

  GraphStore other = testing::make_store(testing::star_edges(1500), 3, 2);
  save_store(other, path, zstd_frames());
  GraphStore back = load_store(path, shared(""), &st);
  EXPECT_TRUE(st.built_cache);
  EXPECT_TRUE(contains(st.cache_note, "stale")) << st.cache_note;
  EXPECT_EQ(digest_of(back), digest_of(other));

  // Same bytes, newer mtime: rebuilt too (the cache cannot tell it is the same file).
  std::filesystem::last_write_time(path, std::filesystem::last_write_time(path) + std::chrono::hours(1));
  load_store(path, shared(""), &st);
  EXPECT_TRUE(st.built_cache);
  load_store(path, shared(""), &st);
  EXPECT_FALSE(st.built_cache);
}

TEST(StoreSharedCache, DamagedCacheIsRebuilt) {
  GraphStore s = testing::make_store(testing::cycle_edges(2000), 8, 5);
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  const std::string cache = path + ".cache";
  save_store(s, path, zstd_frames());
  LoadStats st;
  load_store(path, shared(""), &st);
  ASSERT_TRUE(st.built_cache);

  std::vector<char> bytes = testing::read_bytes(cache);
  const StoreSection features = *read_store_header(cache).find("features");
  std::vector<char> flipped = bytes;
  flipped[features.offset + 700] ^= 0x20;
  testing::write_bytes(cache, flipped);
  GraphStore back = load_store(path, shared(""), &st);
  EXPECT_TRUE(st.built_cache);
  EXPECT_TRUE(contains(st.cache_note, "section 'features' frame 1")) << st.cache_note;
  EXPECT_TRUE(contains(st.cache_note, "checksum mismatch")) << st.cache_note;
  EXPECT_EQ(digest_of(back), digest_of(s));

  testing::write_bytes(cache, {bytes.begin(), bytes.end() - 100});
  back = load_store(path, shared(""), &st);
  EXPECT_TRUE(st.built_cache);
  EXPECT_TRUE(contains(st.cache_note, "truncated")) << st.cache_note;
  EXPECT_EQ(digest_of(back), digest_of(s));
}

TEST(StoreSharedCache, LeftoversOfAKilledBuilderAreRemoved) {
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  save_store(testing::make_store(testing::cycle_edges(500), 4, 3), path, zstd_frames());
  testing::write_bytes(path + ".cache.tmp-99999-0", {'x', 'y'});
  LoadStats st;
  load_store(path, shared(""), &st);
  EXPECT_TRUE(st.built_cache);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"s.gcn", "s.gcn.cache", "s.gcn.cache.lock"}));
}

TEST(StoreSharedCache, DamagedSourceLeavesNoCache) {
  ScratchDir dir;
  const std::string path = dir.file("s.gcn");
  save_store(testing::make_store(testing::cycle_edges(2000), 8, 5), path, zstd_frames());
  const StoreSection labels = *read_store_header(path).find("labels");
  std::vector<char> bytes = testing::read_bytes(path);
  bytes[labels.offset + labels.stored_size - 20] ^= 0x01;
  testing::write_bytes(path, bytes);
  std::string e = testing::error_of([&] { load_store(path, shared(dir.file("cache"))); });
  EXPECT_TRUE(contains(e, path + ": section 'labels' frame")) << e;
  std::vector<std::string> entries;
  for (const auto& f : std::filesystem::directory_iterator(dir.file("cache")))
    entries.push_back(f.path().string());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].ends_with(".cache.lock")) << entries[0];
}

}  // namespace
}  // namespace dgcn
