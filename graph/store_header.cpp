#include "graph/store_header.h"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>

#include "base/digest.h"
#include "base/error.h"
#include "base/file_io.h"
#include "graph/file_kind.h"

static_assert(std::endian::native == std::endian::little, "the .gcn reader assumes a little-endian host");

namespace dgcn {

const char* dtype_name(StoreDtype dtype) {
  switch (dtype) {
    case StoreDtype::kInt32:
      return "int32";
    case StoreDtype::kInt64:
      return "int64";
    case StoreDtype::kFloat32:
      return "float32";
    case StoreDtype::kUint8:
      return "uint8";
  }
  return "unknown";
}

const char* codec_name(StoreCodec codec) {
  switch (codec) {
    case StoreCodec::kRaw:
      return "raw";
    case StoreCodec::kZstd:
      return "zstd";
  }
  return "unknown";
}

size_t dtype_size(StoreDtype dtype) {
  switch (dtype) {
    case StoreDtype::kInt32:
    case StoreDtype::kFloat32:
      return 4;
    case StoreDtype::kInt64:
      return 8;
    case StoreDtype::kUint8:
      return 1;
  }
  return 0;
}

const StoreSection* StoreHeader::find(std::string_view name) const {
  for (const auto& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

bool StoreHeader::all_raw() const {
  return std::all_of(sections.begin(), sections.end(),
                     [](const auto& s) { return s.codec == StoreCodec::kRaw; });
}

uint64_t StoreHeader::raw_bytes() const {
  uint64_t total = 0;
  for (const auto& s : sections) total += s.raw_size;
  return total;
}

namespace detail {

namespace {

constexpr unsigned char kMagic[8] = {0x89, 'G', 'C', 'N', '\r', '\n', 0x1a, '\n'};
constexpr size_t kChecksumOffset = 24;

uint64_t mul_checked(uint64_t a, uint64_t b, const std::string& what, const char* field) {
  uint64_t r;
  DGCN_CHECK(!__builtin_mul_overflow(a, b, &r), "{}: {} overflows ({} x {})", what, field, a, b);
  return r;
}

uint64_t add_checked(uint64_t a, uint64_t b, const std::string& what, const char* field) {
  uint64_t r;
  DGCN_CHECK(!__builtin_add_overflow(a, b, &r), "{}: {} overflows ({} + {})", what, field, a, b);
  return r;
}

// Little-endian field access into a byte span, bounds-checked by the caller.
template <class T>
T get(std::span<const std::byte> b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}
template <class T>
void put(std::vector<std::byte>& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof(T));
}

uint64_t header_checksum_of(std::span<const std::byte> bytes) {
  Digest d;
  d.update(bytes.data(), kChecksumOffset);
  const uint64_t zero = 0;
  d.update_value(zero);
  d.update(bytes.data() + kChecksumOffset + 8, bytes.size() - kChecksumOffset - 8);
  return d.value();
}

std::string hex_bytes(std::span<const std::byte> b) {
  std::string s;
  for (size_t i = 0; i < b.size(); ++i)
    s += fmt::format("{}{:02x}", i ? " " : "", static_cast<unsigned>(b[i]));
  return s;
}

void check_frames(const StoreHeader& h, const StoreSection& s, const std::string& what) {
  uint64_t stored = 0;
  for (uint64_t i = 0; i < s.num_frames; ++i) {
    const StoreFrame& f = h.frames[s.first_frame + i];
    const uint64_t raw = frame_raw_size(s, i);
    if (s.codec == StoreCodec::kRaw) {
      DGCN_CHECK(f.stored_size == raw,
                 "{}: frame {} stores {} bytes, a raw frame must store its {} raw bytes", what, i,
                 f.stored_size, raw);
    } else {
      DGCN_CHECK(f.stored_size >= 1 && f.stored_size <= ZSTD_compressBound(raw),
                 "{}: zstd frame {} stores {} bytes, expected 1 to {} for {} raw bytes", what, i,
                 f.stored_size, ZSTD_compressBound(raw), raw);
      DGCN_CHECK(raw <= f.stored_size * kMaxZstdRatio,
                 "{}: zstd frame {} announces {} raw bytes from {} stored bytes, more than zstd can produce",
                 what, i, raw, f.stored_size);
    }
    stored = add_checked(stored, f.stored_size, what, "sum of frame sizes");
  }
  DGCN_CHECK(stored == s.stored_size, "{}: frames store {} bytes in all, the section entry says {}", what,
             stored, s.stored_size);
  DGCN_CHECK(section_checksum({h.frames.data() + s.first_frame, s.num_frames}) == s.checksum,
             "{}: section checksum {:016x} does not match its frame checksums", what, s.checksum);
}

void check_section(const StoreHeader& h, const StoreSection& s, uint64_t& next_frame,
                   const std::string& path) {
  const std::string what = fmt::format("{}: section '{}'", path, s.name);
  const SectionShape want = expected_shape(s.name, h, what);
  DGCN_CHECK(s.dtype == want.dtype, "{}: dtype code {} ({}), expected {}", what, static_cast<int>(s.dtype),
             dtype_name(s.dtype), dtype_name(want.dtype));
  DGCN_CHECK(s.codec == StoreCodec::kRaw || s.codec == StoreCodec::kZstd, "{}: unknown codec code {}", what,
             static_cast<int>(s.codec));
  if (want.any_rows) {
    DGCN_CHECK(s.cols == 1 && s.rows <= want.rows, "{}: shape [{}, {}], expected [k, 1] with k <= {} nodes",
               what, s.rows, s.cols, want.rows);
  } else {
    DGCN_CHECK(s.rows == want.rows && s.cols == want.cols, "{}: shape [{}, {}], expected [{}, {}]", what,
               s.rows, s.cols, want.rows, want.cols);
  }
  const uint64_t raw =
      mul_checked(mul_checked(s.rows, s.cols, what, "rows x cols"), dtype_size(s.dtype), what, "raw size");
  DGCN_CHECK(s.raw_size == raw, "{}: raw_size {} but {} x {} {} is {} bytes", what, s.raw_size, s.rows,
             s.cols, dtype_name(s.dtype), raw);
  DGCN_CHECK(raw > 0, "{}: an empty section is stored (empty sections are left out)", what);
  DGCN_CHECK(s.frame_size >= 1 && s.frame_size <= kMaxFrameBytes, "{}: frame_size {} is outside [1, {}]",
             what, s.frame_size, kMaxFrameBytes);
  const uint64_t frames = raw / s.frame_size + (raw % s.frame_size != 0);
  DGCN_CHECK(s.num_frames == frames, "{}: {} frames, but {} raw bytes in frames of {} make {}", what,
             s.num_frames, raw, s.frame_size, frames);
  DGCN_CHECK(s.first_frame == next_frame,
             "{}: first_frame {}, expected {} (frames follow the section table order)", what, s.first_frame,
             next_frame);
  DGCN_CHECK(s.num_frames <= h.frames.size() - next_frame,
             "{}: frames [{}, {}) lie beyond the {}-entry frame table", what, s.first_frame,
             s.first_frame + s.num_frames, h.frames.size());
  next_frame += s.num_frames;
  DGCN_CHECK(s.offset >= h.header_size, "{}: offset {} lies inside the {}-byte header", what, s.offset,
             h.header_size);
  DGCN_CHECK(s.stored_size <= h.file_size && s.offset <= h.file_size - s.stored_size,
             "{}: {} bytes at offset {} lie beyond the end of the {}-byte file", what, s.stored_size,
             s.offset, h.file_size);
  DGCN_CHECK(s.codec != StoreCodec::kRaw || s.offset % kRawAlignment == 0,
             "{}: raw section at offset {}, not a multiple of {}", what, s.offset, kRawAlignment);
  check_frames(h, s, what);
}

}  // namespace

SectionShape expected_shape(std::string_view name, const StoreHeader& h, const std::string& what) {
  const auto n = static_cast<uint64_t>(h.num_nodes);
  if (name == "indptr") return {StoreDtype::kInt64, add_checked(n, 1, what, "num_nodes + 1"), 1, false};
  if (name == "indices") {
    return {h.id_width == IdWidth::k32 ? StoreDtype::kInt32 : StoreDtype::kInt64,
            static_cast<uint64_t>(h.num_edges), 1, false};
  }
  if (name == "features") return {StoreDtype::kFloat32, n, static_cast<uint64_t>(h.num_features), false};
  if (name == "labels") {
    if (h.task == Task::kMultiLabel)
      return {StoreDtype::kUint8, n, (static_cast<uint64_t>(h.num_classes) + 7) / 8, false};
    return {StoreDtype::kInt32, h.task == Task::kSingleLabel ? n : 0, 1, false};
  }
  if (name == "train" || name == "valid" || name == "test") return {StoreDtype::kInt64, n, 1, true};
  if (name == "degree") return {StoreDtype::kInt32, n, 1, false};
  if (name == "node_ids") return {StoreDtype::kInt64, n, 1, true};  // none, or one per node (validate)
  if (name == "global_ids") return {StoreDtype::kInt64, h.part_count > 0 ? n : 0, 1, false};
  if (name == "node_parts") {
    return {StoreDtype::kInt32, h.part_count > 0 ? static_cast<uint64_t>(h.num_global_nodes) : 0, 1, false};
  }
  throw Error(fmt::format("{}: unknown section name", what));
}

void check_scalars(const StoreHeader& h, const std::string& what) {
  DGCN_CHECK(h.num_nodes >= 0 && h.num_edges >= 0 && h.num_features >= 0 && h.num_classes >= 0,
             "{}: negative count (num_nodes {}, num_edges {}, num_features {}, num_classes {})", what,
             h.num_nodes, h.num_edges, h.num_features, h.num_classes);
  DGCN_CHECK(h.id_width == IdWidth::k32 || h.id_width == IdWidth::k64, "{}: id_width {}, expected 4 or 8",
             what, static_cast<int>(h.id_width));
  DGCN_CHECK(h.id_width == IdWidth::k64 || h.num_nodes <= INT32_MAX, "{}: {} nodes do not fit 4-byte ids",
             what, h.num_nodes);
  if (h.part_count == 0) {
    DGCN_CHECK(h.part_index == 0 && h.num_global_nodes == 0,
               "{}: part_index {} and num_global_nodes {} set in a whole graph (part_count 0)", what,
               h.part_index, h.num_global_nodes);
  } else {
    DGCN_CHECK(
        h.part_count >= 1 && h.part_count <= kMaxParts && h.part_index >= 0 && h.part_index < h.part_count,
        "{}: part {} of {} parts", what, h.part_index, h.part_count);
    DGCN_CHECK(h.num_global_nodes >= h.num_nodes,
               "{}: a part of {} nodes of a graph of {} nodes (num_global_nodes)", what, h.num_nodes,
               h.num_global_nodes);
    DGCN_CHECK(h.id_width == IdWidth::k64 || h.num_global_nodes <= INT32_MAX,
               "{}: the whole graph's {} nodes do not fit 4-byte ids", what, h.num_global_nodes);
  }
  switch (h.task) {
    case Task::kNone:
      DGCN_CHECK(h.num_classes == 0, "{}: task 'none' with {} classes", what, h.num_classes);
      break;
    case Task::kSingleLabel:
    case Task::kMultiLabel:
      DGCN_CHECK(h.num_classes >= 1 && h.num_classes <= INT32_MAX, "{}: {} task with {} classes", what,
                 task_name(h.task), h.num_classes);
      break;
    default:
      throw Error(fmt::format("{}: unknown task code {}", what, static_cast<int>(h.task)));
  }
}

uint64_t header_size_for(size_t num_sections, size_t num_frames, size_t metadata_bytes) {
  return kFixedHeaderBytes + kSectionEntryBytes * num_sections + kFrameEntryBytes * num_frames +
         metadata_bytes;
}

uint64_t section_checksum(std::span<const StoreFrame> frames) {
  Digest d;
  for (const auto& f : frames) d.update_value(f.checksum);
  return d.value();
}

std::vector<std::byte> encode_header(const StoreHeader& h) {
  std::vector<std::byte> b(header_size_for(h.sections.size(), h.frames.size(), h.metadata_json.size()));
  std::memcpy(b.data(), kMagic, sizeof(kMagic));
  put<uint32_t>(b, 8, h.version);
  put<uint32_t>(b, 12, static_cast<uint32_t>(h.sections.size()));
  put<uint64_t>(b, 16, b.size());
  put<uint64_t>(b, 32, h.file_size);
  put<int64_t>(b, 40, h.num_nodes);
  put<int64_t>(b, 48, h.num_edges);
  put<int64_t>(b, 56, h.num_features);
  put<int64_t>(b, 64, h.num_classes);
  put<uint8_t>(b, 72, static_cast<uint8_t>(h.task));
  put<uint8_t>(b, 73, static_cast<uint8_t>(h.id_width));
  put<uint16_t>(b, 74, static_cast<uint16_t>(h.part_index));
  put<uint16_t>(b, 76, static_cast<uint16_t>(h.part_count));
  put<uint64_t>(b, 80, h.frames.size());
  put<uint64_t>(b, 88, h.metadata_json.size());
  put<uint64_t>(b, 96, h.source.file_size);
  put<int64_t>(b, 104, h.source.mtime_ns);
  put<uint64_t>(b, 112, h.source.header_checksum);
  put<int64_t>(b, 120, h.num_global_nodes);
  size_t off = kFixedHeaderBytes;
  for (const auto& s : h.sections) {
    std::memcpy(b.data() + off, s.name.data(), std::min<size_t>(s.name.size(), 16));
    put<uint8_t>(b, off + 16, static_cast<uint8_t>(s.dtype));
    put<uint8_t>(b, off + 17, static_cast<uint8_t>(s.codec));
    put<uint64_t>(b, off + 24, s.rows);
    put<uint64_t>(b, off + 32, s.cols);
    put<uint64_t>(b, off + 40, s.offset);
    put<uint64_t>(b, off + 48, s.stored_size);
    put<uint64_t>(b, off + 56, s.raw_size);
    put<uint64_t>(b, off + 64, s.frame_size);
    put<uint64_t>(b, off + 72, s.first_frame);
    put<uint64_t>(b, off + 80, s.num_frames);
    put<uint64_t>(b, off + 88, s.checksum);
    off += kSectionEntryBytes;
  }
  for (const auto& f : h.frames) {
    put<uint64_t>(b, off, f.stored_size);
    put<uint64_t>(b, off + 8, f.checksum);
    off += kFrameEntryBytes;
  }
  std::memcpy(b.data() + off, h.metadata_json.data(), h.metadata_json.size());
  put<uint64_t>(b, kChecksumOffset, header_checksum_of(b));
  return b;
}

uint64_t check_fixed_header(std::span<const std::byte> fixed, uint64_t file_size, const std::string& path) {
  const bool magic_prefix =
      fixed.empty() || std::memcmp(fixed.data(), kMagic, std::min(fixed.size(), sizeof(kMagic))) == 0;
  if (!looks_like_store(fixed) && !magic_prefix) {
    const std::string hint = file_kind_hint(path, fixed);
    DGCN_CHECK(fixed.size() >= 8, "{}: not a .gcn file: {} bytes{}", path, fixed.size(),
               hint.empty() ? "" : "; " + hint);
    throw Error(fmt::format("{}: not a .gcn file: magic bytes are {}, expected 89 47 43 4e 0d 0a 1a 0a{}",
                            path, hex_bytes(fixed.first(8)), hint.empty() ? "" : "; " + hint));
  }
  DGCN_CHECK(fixed.size() >= kFixedHeaderBytes,
             "{}: not a .gcn file: {} bytes, shorter than the {}-byte header (truncated?)", path,
             fixed.size(), kFixedHeaderBytes);
  const auto version = get<uint32_t>(fixed, 8);
  DGCN_CHECK(version == kStoreVersion, "{}: .gcn format version {}, this build reads version {}", path,
             version, kStoreVersion);
  const auto declared = get<uint64_t>(fixed, 32);
  DGCN_CHECK(declared == file_size,
             "{}: header says the file has {} bytes but it has {} (truncated or appended to?)", path,
             declared, file_size);
  const auto header_size = get<uint64_t>(fixed, 16);
  DGCN_CHECK(header_size >= kFixedHeaderBytes && header_size <= file_size && header_size <= kMaxHeaderBytes,
             "{}: header_size {} is outside [{}, {}]", path, header_size, kFixedHeaderBytes,
             std::min(file_size, kMaxHeaderBytes));
  return header_size;
}

StoreHeader decode_header(std::span<const std::byte> b, uint64_t file_size, const std::string& path) {
  const uint64_t header_size = check_fixed_header(b, file_size, path);
  DGCN_CHECK(b.size() == header_size, "{}: read {} header bytes, header_size says {}", path, b.size(),
             header_size);
  const uint64_t stored_checksum = get<uint64_t>(b, kChecksumOffset);
  const uint64_t computed = header_checksum_of(b);
  DGCN_CHECK(stored_checksum == computed,
             "{}: header checksum mismatch (stored {:016x}, computed {:016x}): the header is corrupt", path,
             stored_checksum, computed);

  StoreHeader h;
  h.version = get<uint32_t>(b, 8);
  h.header_size = header_size;
  h.header_checksum = stored_checksum;
  h.file_size = file_size;
  h.num_nodes = get<int64_t>(b, 40);
  h.num_edges = get<int64_t>(b, 48);
  h.num_features = get<int64_t>(b, 56);
  h.num_classes = get<int64_t>(b, 64);
  h.task = static_cast<Task>(get<uint8_t>(b, 72));
  h.id_width = static_cast<IdWidth>(get<uint8_t>(b, 73));
  h.part_index = get<uint16_t>(b, 74);
  h.part_count = get<uint16_t>(b, 76);
  h.num_global_nodes = get<int64_t>(b, 120);
  h.source = {get<uint64_t>(b, 96), get<int64_t>(b, 104), get<uint64_t>(b, 112)};
  check_scalars(h, path);

  const uint64_t num_sections = get<uint32_t>(b, 12);
  const uint64_t num_frames = get<uint64_t>(b, 80);
  const uint64_t metadata_size = get<uint64_t>(b, 88);
  DGCN_CHECK(num_sections <= kMaxSections, "{}: {} sections, at most {} exist", path, num_sections,
             kMaxSections);
  DGCN_CHECK(num_frames <= header_size / kFrameEntryBytes && metadata_size <= header_size &&
                 header_size_for(num_sections, num_frames, metadata_size) == header_size,
             "{}: header_size {} does not fit {} sections, {} frames and {} metadata bytes", path,
             header_size, num_sections, num_frames, metadata_size);

  size_t off = kFixedHeaderBytes;
  for (uint64_t i = 0; i < num_sections; ++i, off += kSectionEntryBytes) {
    StoreSection s;
    const char* name = reinterpret_cast<const char*>(b.data() + off);
    s.name.assign(name, strnlen(name, 16));
    const bool known =
        std::find(std::begin(kSectionNames), std::end(kSectionNames), s.name) != std::end(kSectionNames);
    DGCN_CHECK(known, "{}: section {} has unknown name '{}'", path, i, s.name);
    DGCN_CHECK(h.find(s.name) == nullptr, "{}: section '{}' appears twice", path, s.name);
    s.dtype = static_cast<StoreDtype>(get<uint8_t>(b, off + 16));
    s.codec = static_cast<StoreCodec>(get<uint8_t>(b, off + 17));
    s.rows = get<uint64_t>(b, off + 24);
    s.cols = get<uint64_t>(b, off + 32);
    s.offset = get<uint64_t>(b, off + 40);
    s.stored_size = get<uint64_t>(b, off + 48);
    s.raw_size = get<uint64_t>(b, off + 56);
    s.frame_size = get<uint64_t>(b, off + 64);
    s.first_frame = get<uint64_t>(b, off + 72);
    s.num_frames = get<uint64_t>(b, off + 80);
    s.checksum = get<uint64_t>(b, off + 88);
    h.sections.push_back(std::move(s));
  }
  h.frames.resize(num_frames);
  for (auto& f : h.frames) {
    f.stored_size = get<uint64_t>(b, off);
    f.checksum = get<uint64_t>(b, off + 8);
    off += kFrameEntryBytes;
  }
  h.metadata_json.assign(reinterpret_cast<const char*>(b.data() + off), metadata_size);

  uint64_t next_frame = 0;
  for (const auto& s : h.sections) check_section(h, s, next_frame, path);
  DGCN_CHECK(next_frame == num_frames, "{}: the sections use {} frames, the frame table has {}", path,
             next_frame, num_frames);

  std::vector<const StoreSection*> by_offset;
  for (const auto& s : h.sections) by_offset.push_back(&s);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* c) { return a->offset < c->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const StoreSection& a = *by_offset[i - 1];
    const StoreSection& c = *by_offset[i];
    DGCN_CHECK(a.offset + a.stored_size <= c.offset, "{}: sections '{}' [{}, {}) and '{}' [{}, {}) overlap",
               path, a.name, a.offset, a.offset + a.stored_size, c.name, c.offset, c.offset + c.stored_size);
  }

  // Sections that must be there for the scalars the header announces.
  const auto require = [&](const char* name, bool needed, const char* why) {
    DGCN_CHECK(!needed || h.find(name) != nullptr, "{}: section '{}' is missing but {}", path, name, why);
  };
  require("indptr", true, "every store has one");
  require("indices", h.num_edges > 0, "the header announces edges");
  require("features", h.num_nodes > 0 && h.num_features > 0, "the header announces features");
  require("labels", h.num_nodes > 0 && h.task != Task::kNone, "the header announces a labelled task");
  require("degree", h.num_nodes > 0, "the header announces nodes");
  require("global_ids", h.part_count > 0 && h.num_nodes > 0, "the header announces a part");
  require("node_parts", h.part_count > 0 && h.num_global_nodes > 0, "the header announces a part");
  return h;
}

StoreHeader read_header(int fd, uint64_t file_size, const std::string& path) {
  std::vector<std::byte> fixed(std::min<uint64_t>(file_size, kFixedHeaderBytes));
  pread_all(fd, fixed.data(), fixed.size(), 0, path);
  const uint64_t header_size = check_fixed_header(fixed, file_size, path);
  std::vector<std::byte> bytes(header_size);
  pread_all(fd, bytes.data(), bytes.size(), 0, path);
  return decode_header(bytes, file_size, path);
}

}  // namespace detail

StoreHeader read_store_header(const std::string& path) {
  UniqueFd fd = open_read(path);
  return detail::read_header(fd.get(), stat_fd(fd.get(), path).size, path);
}

}  // namespace dgcn
