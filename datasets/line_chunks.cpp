#include "datasets/line_chunks.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/mutex.h"
#include "base/timing.h"

namespace dgcn {

namespace {
constexpr size_t kInputBytes = size_t{1} << 18;  // compressed bytes read per fread
}

LineChunkReader::LineChunkReader(std::string path, size_t chunk_bytes)
    : path_(std::move(path)),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 1)),
      in_(new unsigned char[kInputBytes]) {
  file_.reset(std::fopen(path_.c_str(), "rb"));
  DGCN_CHECK(file_ != nullptr, "{}: cannot open ({})", path_, std::strerror(errno));
  size_t n = fill_input();
  gzip_ = n >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
  if (gzip_) {
    // 16 + MAX_WBITS: a gzip wrapper (header and CRC-32 trailer are checked).
    int rc = inflateInit2(&zs_, 16 + MAX_WBITS);
    DGCN_CHECK(rc == Z_OK, "{}: zlib inflateInit2 failed ({})", path_, rc);
    zs_initialized_ = true;
    stream_ended_ = false;
    zs_.next_in = in_.get();
    zs_.avail_in = static_cast<uInt>(n);
  } else {
    carry_.assign(reinterpret_cast<const char*>(in_.get()), n);
  }
}

LineChunkReader::~LineChunkReader() {
  if (zs_initialized_) inflateEnd(&zs_);
}

size_t LineChunkReader::fill_input() {
  size_t n = std::fread(in_.get(), 1, kInputBytes, file_.get());
  if (n < kInputBytes) {
    DGCN_CHECK(!std::ferror(file_.get()), "{}: read error after {} bytes ({})", path_, file_bytes_read_,
               std::strerror(errno));
    file_eof_ = true;
  }
  file_bytes_read_ += static_cast<int64_t>(n);
  return n;
}

size_t LineChunkReader::read_text(std::string& out, size_t max_bytes) {
  const size_t old = out.size();
  out.resize(old + max_bytes);
  char* dst = out.data() + old;
  size_t got = 0;
  if (!gzip_) {
    got = std::fread(dst, 1, max_bytes, file_.get());
    DGCN_CHECK(got == max_bytes || !std::ferror(file_.get()), "{}: read error after {} bytes ({})", path_,
               file_bytes_read_, std::strerror(errno));
    file_bytes_read_ += static_cast<int64_t>(got);
  } else {
    while (got == 0) {
      if (zs_.avail_in == 0) {
        if (file_eof_) {
          DGCN_CHECK(stream_ended_,
                     "{}: truncated gzip stream (the file ends after {} compressed bytes, {} bytes of "
                     "text, inside a compressed block)",
                     path_, file_bytes_read_, text_bytes_ + static_cast<int64_t>(old));
          break;
        }
        zs_.next_in = in_.get();
        zs_.avail_in = static_cast<uInt>(fill_input());
        continue;
      }
      if (stream_ended_) {  // another gzip member follows the previous one
        inflateReset(&zs_);
        stream_ended_ = false;
      }
      zs_.next_out = reinterpret_cast<Bytef*>(dst);
      zs_.avail_out = static_cast<uInt>(max_bytes);
      int rc = inflate(&zs_, Z_NO_FLUSH);
      got = max_bytes - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        stream_ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw Error(fmt::format("{}: corrupt gzip data near compressed byte {}: {}", path_,
                                file_bytes_read_ - static_cast<int64_t>(zs_.avail_in),
                                zs_.msg != nullptr ? zs_.msg : zError(rc)));
      }
    }
  }
  out.resize(old + got);
  return got;
}

bool LineChunkReader::next(LineChunk& chunk) {
  if (done_) return false;
  chunk.text.swap(carry_);
  carry_.clear();
  for (;;) {
    if (chunk.text.size() >= chunk_bytes_) {
      size_t nl = chunk.text.rfind('\n');
      if (nl != std::string::npos) {
        carry_.assign(chunk.text, nl + 1);
        chunk.text.resize(nl + 1);
        break;
      }
      DGCN_CHECK(chunk.text.size() <= kMaxLineBytes, "{}: line {} is longer than {} bytes", path_, next_line_,
                 kMaxLineBytes);
    }
    size_t want = chunk.text.size() < chunk_bytes_ ? chunk_bytes_ - chunk.text.size() : chunk_bytes_;
    if (read_text(chunk.text, want) == 0) {
      done_ = true;
      break;
    }
  }
  if (chunk.text.empty()) return false;
  chunk.index = next_index_++;
  chunk.first_line = next_line_;
  next_line_ += std::count(chunk.text.begin(), chunk.text.end(), '\n') + (chunk.text.back() != '\n' ? 1 : 0);
  text_bytes_ += static_cast<int64_t>(chunk.text.size());
  return true;
}

StreamStats stream_line_chunks(const std::string& path, int num_threads,
                               const std::function<void(const LineChunk&)>& parse, size_t chunk_bytes) {
  const auto start = std::chrono::steady_clock::now();
  LineChunkReader reader(path, chunk_bytes);
  // The calling thread inflates; the other threads parse (at least one).
  const int workers = std::max(1, num_threads - 1);
  // Chunks alive at once: `capacity` queued + one per worker + one being filled.
  const size_t capacity = static_cast<size_t>(workers) + 2;

  // What the reader (this thread) and the parsing workers share.
  struct Shared {
    Mutex mutex;
    CondVar not_empty{&mutex}, not_full{&mutex};
    std::deque<std::unique_ptr<LineChunk>> queue GUARDED_BY(mutex);   // filled, waiting for a worker
    std::vector<std::unique_ptr<LineChunk>> spare GUARDED_BY(mutex);  // parsed, storage reused by the reader
    bool reader_done GUARDED_BY(mutex) = false;
    bool stop GUARDED_BY(mutex) = false;
    int64_t error_index GUARDED_BY(mutex) = INT64_MAX;
    std::exception_ptr error GUARDED_BY(mutex);
  } shared;

  // Chunks are dequeued in file order, so when chunk i fails every chunk
  // before it has already been taken by a worker and will finish: keeping the
  // error of the smallest index reports the first bad line whatever the timing.
  auto record_error = [&](int64_t index, std::exception_ptr e) {
    MutexLock lock(&shared.mutex);
    if (index < shared.error_index) {
      shared.error_index = index;
      shared.error = std::move(e);
    }
    shared.stop = true;
    shared.not_empty.signal_all();
    shared.not_full.signal_all();
  };

  std::vector<std::thread> pool;
  pool.reserve(workers);
  for (int t = 0; t < workers; ++t) {
    pool.emplace_back([&] {
      for (;;) {
        std::unique_ptr<LineChunk> chunk;
        {
          MutexLock lock(&shared.mutex);
          while (shared.queue.empty() && !shared.reader_done && !shared.stop) shared.not_empty.wait();
          if (shared.stop || shared.queue.empty()) return;
          chunk = std::move(shared.queue.front());
          shared.queue.pop_front();
        }
        shared.not_full.signal();
        try {
          parse(*chunk);
        } catch (...) {
          record_error(chunk->index, std::current_exception());
        }
        MutexLock lock(&shared.mutex);
        shared.spare.push_back(std::move(chunk));
      }
    });
  }

  try {
    for (;;) {
      std::unique_ptr<LineChunk> chunk;
      {
        MutexLock lock(&shared.mutex);
        while (shared.queue.size() >= capacity && !shared.stop) shared.not_full.wait();
        if (shared.stop) break;
        if (!shared.spare.empty()) {
          chunk = std::move(shared.spare.back());
          shared.spare.pop_back();
        }
      }
      if (!chunk) chunk = std::make_unique<LineChunk>();
      if (!reader.next(*chunk)) break;
      {
        MutexLock lock(&shared.mutex);
        shared.queue.push_back(std::move(chunk));
      }
      shared.not_empty.signal();
    }
  } catch (...) {
    record_error(INT64_MAX - 1, std::current_exception());
  }
  {
    MutexLock lock(&shared.mutex);
    shared.reader_done = true;
  }
  shared.not_empty.signal_all();
  for (auto& th : pool) th.join();
  {
    MutexLock lock(&shared.mutex);
    if (shared.error) std::rethrow_exception(shared.error);
  }

  StreamStats stats;
  stats.lines = reader.lines();
  stats.text_bytes = reader.text_bytes();
  stats.file_bytes = reader.file_bytes_read();
  stats.gzip = reader.gzip();
  stats.seconds = seconds_since(start);
  return stats;
}

}  // namespace dgcn
