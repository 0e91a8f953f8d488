// NumPy .npz archives (zip files of .npy members), read with libzip: both the
// stored members of np.savez and the DEFLATE-compressed ones of
// np.savez_compressed / scipy.sparse.save_npz.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "datasets/npy.h"

struct zip;

namespace dgcn {

class NpzArchive {
 public:
  // Opens `path`; errors name it and libzip's reason.
  explicit NpzArchive(std::string path);
  ~NpzArchive();
  NpzArchive(const NpzArchive&) = delete;
  NpzArchive& operator=(const NpzArchive&) = delete;

  const std::string& path() const { return path_; }
  // Array names (member names without ".npy"), in archive order.
  const std::vector<std::string>& keys() const { return keys_; }
  bool contains(const std::string& key) const;

  // Reads member `key`.npy. A missing key is an error listing the keys present.
  // Sizes are checked against the member's declared size, and that size against
  // what its compressed bytes can possibly hold, before anything is allocated.
  NpyArray array(const std::string& key) const;
  // Only the header of member `key`.npy (dtype and shape), without its data.
  NpyHeader header(const std::string& key) const;

 private:
  // Opens member `key`.npy after checking its sizes; calls fn(read, declared size, what).
  template <class F>
  auto with_member(const std::string& key, F&& fn) const;

  std::string path_;
  uint64_t file_bytes_ = 0;
  zip* archive_ = nullptr;
  std::vector<std::string> keys_;
};

}  // namespace dgcn
