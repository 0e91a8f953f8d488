#include "graph/file_kind.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace dgcn {
namespace {

bool starts_with(std::span<const std::byte> head, const char* magic, size_t n) {
  return head.size() >= n && std::memcmp(head.data(), magic, n) == 0;
}

std::string stem_store(const std::string& path) {
  return std::filesystem::path(path).replace_extension(".gcn").filename().string();
}

}  // namespace

FileKind file_kind(std::span<const std::byte> head) {
  if (starts_with(head, "\x89GCN\r\n\x1a\n", 8)) return FileKind::kStore;
  if (starts_with(head, "PK\x03\x04", 4)) {
    // The first entry's name follows the 30-byte local header; its length is
    // the little-endian u16 at byte 26. A PyTorch archive names every entry
    // "<archive>/...": data.pkl first (torch.save), or the tensors data/0,
    // data/1, ... first (dgcn-train's checkpoints); a .npz names arrays.
    if (head.size() >= 30) {
      const size_t n = static_cast<size_t>(head[26]) | static_cast<size_t>(head[27]) << 8;
      if (head.size() >= 30 + n) {
        const std::string_view name(reinterpret_cast<const char*>(head.data()) + 30, n);
        const size_t slash = name.find('/');
        const std::string_view rest = slash == std::string_view::npos ? "" : name.substr(slash + 1);
        if (rest == "data.pkl" || rest.substr(0, 5) == "data/") return FileKind::kTorch;
      }
    }
    return FileKind::kZip;
  }
  if (starts_with(head, "\x93NUMPY", 6)) return FileKind::kNpy;
  if (starts_with(head, "\x1f\x8b", 2)) return FileKind::kGzip;
  if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80) return FileKind::kPickle;
  const bool text = !head.empty() && std::all_of(head.begin(), head.end(), [](std::byte b) {
    const auto c = static_cast<unsigned char>(b);
    return c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7f);
  });
  return text ? FileKind::kText : FileKind::kUnknown;
}

std::string file_kind_hint(const std::string& path, std::span<const std::byte> head) {
  const std::string out = stem_store(path);
  switch (file_kind(head)) {
    case FileKind::kStore:
      return fmt::format(
          "it is a .gcn graph store (dgcn's own format): `dgcn-prep info {}` describes it, "
          "dgcn-train and dgcn-predict read it with --data",
          path);
    case FileKind::kTorch:
      return fmt::format(
          "it is a PyTorch archive, like a dgcn-train checkpoint (best.pt, checkpoint-*.pt), not a graph: "
          "continue its run with `dgcn-train --checkpoint {} --resume` and its other flags, or predict "
          "with `dgcn-predict --checkpoint {} --data STORE.gcn --out PREFIX`; --data takes the .gcn store it "
          "was trained on",
          std::filesystem::path(path).parent_path().empty()
              ? std::string(".")
              : std::filesystem::path(path).parent_path().string(),
          path);
    case FileKind::kZip:
      return fmt::format(
          "it is a zip archive, like a NumPy .npz: make a store of it with `dgcn-prep npz --file "
          "{} --out {}`",
          path, out);
    case FileKind::kNpy:
      return "it is a NumPy .npy array; dgcn-prep reads arrays as part of a dataset";
    case FileKind::kGzip:
      return "it is gzip-compressed (an OGB csv.gz or an edge list?): `dgcn-prep ogb --root DIR` or "
             "`dgcn-prep "
             "edgelist --file FILE` make a store of it";
    case FileKind::kPickle:
      return "it looks like a Python pickle (Planetoid's ind.<name>.* files?): `dgcn-prep planetoid --root "
             "DIR "
             "--name NAME` reads those";
    case FileKind::kText:
      return fmt::format(
          "it is text (an edge list?): make a store of it with `dgcn-prep edgelist --file {} --out "
          "{}`",
          path, out);
    case FileKind::kUnknown:
      break;
  }
  return "";
}

namespace {
std::vector<std::byte> head_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> head(256);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  return head;
}
}  // namespace

FileKind file_kind(const std::string& path) {
  return file_kind(head_of(path));
}

std::string file_kind_hint(const std::string& path) {
  return file_kind_hint(path, head_of(path));
}

}  // namespace dgcn
