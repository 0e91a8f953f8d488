// What a file that is not the expected kind looks like, for error messages
// that tell the user what to run instead: a .npz given to dgcn-train, a .gcn
// given to `dgcn-prep edgelist`.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace dgcn {

// kTorch: a zip archive as torch.save and dgcn-train's checkpoints write it
// (its first entry is "<archive>/data.pkl"); kZip: any other zip (a .npz).
enum class FileKind { kUnknown, kStore, kTorch, kZip, kNpy, kGzip, kPickle, kText };

// The kind `head` (the first bytes of a file) starts like.
FileKind file_kind(std::span<const std::byte> head);
// The kind of `path`'s first bytes (kUnknown when it cannot be read).
FileKind file_kind(const std::string& path);
inline bool looks_like_store(std::span<const std::byte> head) {
  return file_kind(head) == FileKind::kStore;
}

// A hint from the first bytes of `path` naming its kind and the dgcn-prep
// command that reads it ("it is a zip archive, like a NumPy .npz: convert it
// with `dgcn-prep npz --file x.npz --out x.gcn`"), or "" when unknown.
std::string file_kind_hint(const std::string& path, std::span<const std::byte> head);

// The same, reading the first bytes of `path` itself ("" when it cannot be read).
std::string file_kind_hint(const std::string& path);

}  // namespace dgcn
