// Pieces load_store's two modes share (store_reader.cpp: private loads and
// verify; store_shared_cache.cpp: mapped loads and the cache).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "graph/store_format.h"
#include "graph/store_frames.h"

namespace dgcn::detail {

// A .gcn file opened and its header checked.
struct OpenStore {
  std::string path;
  UniqueFd fd;
  FileStat stat;
  StoreHeader header;
};
OpenStore open_store(const std::string& path);

// Builds the Csr (which checks its invariants) and the store from one buffer
// per header section (same order), then validates it if asked.
GraphStore assemble_store(const StoreHeader& h, std::vector<Buffer> sections, const std::string& path,
                          const LoadOptions& options, int threads, LoadStats& stats);

// Adds a frame run's timers to `stats`.
void add_frame_stats(const FrameRunStats& run, LoadStats& stats);

GraphStore load_private(const OpenStore& file, const LoadOptions& options, int threads, LoadStats& stats);
GraphStore load_shared(const OpenStore& file, const LoadOptions& options, int threads, LoadStats& stats);

}  // namespace dgcn::detail
