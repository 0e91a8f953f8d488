// Pieces load_gcn's two modes share (gcn_reader.cpp: private loads and
// verify; gcn_shared_cache.cpp: mapped loads and the cache).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "graph/gcn_format.h"
#include "graph/gcn_frames.h"

namespace dgcn::gcn {

// A .gcn file opened and its header checked.
struct OpenGcn {
  std::string path;
  UniqueFd fd;
  FileStat stat;
  GcnHeader header;
};
OpenGcn open_gcn(const std::string& path);

// Builds the Csr (which checks its invariants) and the store from one buffer
// per header section (same order), then validates it if asked.
GraphStore assemble_store(const GcnHeader& h, std::vector<Buffer> sections, const std::string& path,
                          const LoadOptions& options, int threads, LoadStats& stats);

// Adds a frame run's timers to `stats`.
void add_frame_stats(const FrameRunStats& run, LoadStats& stats);

GraphStore load_private(const OpenGcn& file, const LoadOptions& options, int threads, LoadStats& stats);
GraphStore load_shared(const OpenGcn& file, const LoadOptions& options, int threads, LoadStats& stats);

}  // namespace dgcn::gcn
