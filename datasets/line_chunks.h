// Streaming of large text files (plain or gzip) as chunks of whole lines, and
// a parallel driver that parses the chunks on worker threads while one thread
// decompresses. Memory stays bounded: never more than a fixed number of chunks
// exist at once, whatever the file size (ogbn-products' node-feat.csv.gz is
// ~1 GB of text; it is never held whole).
//
//   stream_line_chunks("raw/edge.csv.gz", 8, [&](const LineChunk& c) {
//     for_each_line(c, [&](int64_t line, std::string_view text) { ... });
//   });
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace dgcn {

inline constexpr size_t kDefaultChunkBytes = size_t{4} << 20;
// A single line longer than this is an error (keeps a chunk's size bounded).
inline constexpr size_t kMaxLineBytes = size_t{64} << 20;

// A run of whole lines of one file, numbered from the file's start.
struct LineChunk {
  int64_t index = 0;       // 0, 1, 2, ... in file order
  int64_t first_line = 1;  // 1-based line number of the first line in `text`
  std::string text;        // whole lines; only the file's last line may lack its '\n'
};

// Reads a file as chunks of about `chunk_bytes` of whole lines. A file that
// starts with the gzip magic bytes is inflated (concatenated gzip members are
// read one after another); anything else is read as plain text.
// Errors (dgcn::Error) name the file: missing, truncated or corrupt gzip.
class LineChunkReader {
 public:
  explicit LineChunkReader(std::string path, size_t chunk_bytes = kDefaultChunkBytes);
  ~LineChunkReader();
  LineChunkReader(const LineChunkReader&) = delete;
  LineChunkReader& operator=(const LineChunkReader&) = delete;

  // Fills `chunk` (reusing its storage) with the next lines; false at the end.
  bool next(LineChunk& chunk);

  bool gzip() const { return gzip_; }
  int64_t file_bytes_read() const { return file_bytes_read_; }  // compressed bytes for gzip
  int64_t text_bytes() const { return text_bytes_; }
  int64_t lines() const { return next_line_ - 1; }  // lines handed out so far
  const std::string& path() const { return path_; }

 private:
  // Appends up to `max_bytes` of text to `out`; returns the count, 0 at the end.
  size_t read_text(std::string& out, size_t max_bytes);
  size_t fill_input();

  std::string path_;
  size_t chunk_bytes_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  bool gzip_ = false;
  bool file_eof_ = false;
  bool stream_ended_ = true;  // between gzip members (or before the first)
  z_stream zs_{};
  bool zs_initialized_ = false;
  std::unique_ptr<unsigned char[]> in_;
  std::string carry_;  // a partial last line, moved to the next chunk
  int64_t next_index_ = 0;
  int64_t next_line_ = 1;
  int64_t file_bytes_read_ = 0;
  int64_t text_bytes_ = 0;
  bool done_ = false;
};

struct StreamStats {
  int64_t lines = 0;
  int64_t text_bytes = 0;
  int64_t file_bytes = 0;
  bool gzip = false;
  double seconds = 0;
};

// Reads `path` with a LineChunkReader on the calling thread and calls
// parse(chunk) on max(1, num_threads - 1) worker threads. At most
// workers + 2 chunks are queued (2 * workers + 3 exist at once). `parse` runs concurrently on different
// chunks in any order, so it must place its results by chunk.index or line number (then the outcome does not
// depend on the thread count). The first error in file order (a parse error or the reader's own) is rethrown
// after every thread has stopped.
StreamStats stream_line_chunks(const std::string& path, int num_threads,
                               const std::function<void(const LineChunk&)>& parse,
                               size_t chunk_bytes = kDefaultChunkBytes);

// Calls fn(line_number, text) for every line of the chunk, without the
// trailing '\n' or '\r\n'.
template <class F>
void for_each_line(const LineChunk& chunk, F&& fn) {
  std::string_view rest = chunk.text;
  int64_t line = chunk.first_line;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view text = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    fn(line, text);
    ++line;
  }
}

}  // namespace dgcn
