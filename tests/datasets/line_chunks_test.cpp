#include "datasets/line_chunks.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "dataset_files.h"

namespace dgcn {
namespace {

using testing::error_of;
using testing::TempDir;

std::string numbered_lines(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

// Every (line number, text) the reader hands out, in order.
std::vector<std::pair<int64_t, std::string>> all_lines(const std::string& path, size_t chunk_bytes) {
  LineChunkReader reader(path, chunk_bytes);
  LineChunk chunk;
  std::vector<std::pair<int64_t, std::string>> out;
  int64_t expected_index = 0;
  while (reader.next(chunk)) {
    EXPECT_EQ(chunk.index, expected_index++);
    for_each_line(chunk,
                  [&](int64_t line, std::string_view text) { out.emplace_back(line, std::string(text)); });
  }
  return out;
}

TEST(LineChunks, GzipAndPlainGiveTheSameNumberedLines) {
  TempDir dir;
  const std::string text = numbered_lines(1000);
  testing::write_gz(dir / "a.txt.gz", text);
  testing::write_text(dir / "a.txt", text);
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{100}, size_t{1} << 20}) {
    auto gz = all_lines(dir / "a.txt.gz", chunk);
    auto plain = all_lines(dir / "a.txt", chunk);
    ASSERT_EQ(gz.size(), 1000u) << "chunk " << chunk;
    EXPECT_EQ(gz, plain);
    for (int i = 0; i < 1000; ++i) {
      EXPECT_EQ(gz[i].first, i + 1);
      EXPECT_EQ(gz[i].second, "line " + std::to_string(i + 1));
    }
  }
}

TEST(LineChunks, ChunksHoldWholeLinesAndHandleCrlfAndMissingLastNewline) {
  TempDir dir;
  testing::write_gz(dir / "b.gz", "a,b\r\nccc\r\n\r\nlast");
  LineChunkReader reader(dir / "b.gz", 3);
  LineChunk chunk;
  std::vector<std::string> lines;
  while (reader.next(chunk)) {
    EXPECT_TRUE(chunk.text.back() == '\n' || chunk.text == "last") << chunk.text;
    for_each_line(chunk, [&](int64_t, std::string_view t) { lines.emplace_back(t); });
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"a,b", "ccc", "", "last"}));
  EXPECT_EQ(reader.lines(), 4);
  EXPECT_TRUE(reader.gzip());
}

TEST(LineChunks, ReadsConcatenatedGzipMembers) {
  TempDir dir;
  testing::write_gz(dir / "p1.gz", "1\n2\n");
  testing::write_gz(dir / "p2.gz", "3\n");
  std::ifstream a(dir / "p1.gz", std::ios::binary), b(dir / "p2.gz", std::ios::binary);
  std::ofstream out(dir / "both.gz", std::ios::binary);
  out << a.rdbuf() << b.rdbuf();
  out.close();
  auto lines = all_lines(dir / "both.gz", 1 << 20);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], (std::pair<int64_t, std::string>{3, "3"}));
}

TEST(LineChunks, TruncatedAndCorruptGzipAreNamedErrors) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i * 7919 % 100003) + "," + std::to_string(i) + "\n";
  testing::write_gz(dir / "full.gz", text);
  std::ifstream in(dir / "full.gz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  testing::write_text(dir / "cut.gz", bytes.substr(0, bytes.size() / 2));
  std::string err = error_of([&] { all_lines(dir / "cut.gz", 4096); });
  EXPECT_NE(err.find("cut.gz: truncated gzip stream"), std::string::npos) << err;

  std::string corrupt = bytes;
  for (size_t i = 20; i < 60; ++i) corrupt[i] = static_cast<char>(0xff);
  testing::write_text(dir / "bad.gz", corrupt);
  err = error_of([&] { all_lines(dir / "bad.gz", 4096); });
  EXPECT_NE(err.find("bad.gz: corrupt gzip data"), std::string::npos) << err;

  err = error_of([&] { all_lines(dir / "missing.gz", 4096); });
  EXPECT_NE(err.find("missing.gz: cannot open"), std::string::npos) << err;
}

TEST(LineChunks, StreamParsesEveryLineOnceWhateverTheThreadCount) {
  TempDir dir;
  testing::write_gz(dir / "n.gz", numbered_lines(5000));
  for (int threads : {1, 2, 5}) {
    std::vector<std::atomic<int>> hits(5001);
    StreamStats stats = stream_line_chunks(
        dir / "n.gz", threads,
        [&](const LineChunk& chunk) {
          for_each_line(chunk, [&](int64_t line, std::string_view text) {
            EXPECT_EQ(text, "line " + std::to_string(line));
            hits[line]++;
          });
        },
        64);
    EXPECT_EQ(stats.lines, 5000);
    EXPECT_TRUE(stats.gzip);
    EXPECT_EQ(stats.text_bytes, static_cast<int64_t>(numbered_lines(5000).size()));
    for (int i = 1; i <= 5000; ++i) ASSERT_EQ(hits[i].load(), 1) << "line " << i << ", threads " << threads;
  }
}

TEST(LineChunks, StreamReportsTheFirstBadLineInFileOrder) {
  TempDir dir;
  testing::write_gz(dir / "n.gz", numbered_lines(3000));
  for (int threads : {1, 3, 8}) {
    std::string err = error_of([&] {
      stream_line_chunks(
          dir / "n.gz", threads,
          [&](const LineChunk& chunk) {
            for_each_line(chunk, [&](int64_t line, std::string_view) {
              DGCN_CHECK(line % 700 != 0, "bad line {}", line);
            });
          },
          32);
    });
    EXPECT_EQ(err, "bad line 700") << threads << " threads";
  }
}

TEST(LineChunks, ParseErrorBeforeATruncationWins) {
  TempDir dir;
  testing::write_gz(dir / "full.gz", numbered_lines(50000));
  std::ifstream in(dir / "full.gz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  testing::write_text(dir / "cut.gz", bytes.substr(0, bytes.size() - 100));
  std::string err = error_of([&] {
    stream_line_chunks(
        dir / "cut.gz", 2,
        [&](const LineChunk& chunk) {
          for_each_line(chunk,
                        [&](int64_t line, std::string_view) { DGCN_CHECK(line != 10, "bad line {}", line); });
        },
        256);
  });
  EXPECT_EQ(err, "bad line 10");
}

}  // namespace
}  // namespace dgcn
