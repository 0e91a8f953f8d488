#include "datasets/npz.h"

#include <zip.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "base/error.h"
#include "graph/file_kind.h"

namespace dgcn {

namespace {
// DEFLATE cannot expand data by more than ~1032:1; a member declaring more
// than that is lying, and its declared size must not drive an allocation.
constexpr uint64_t kMaxDeflateRatio = 1032;

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}
}  // namespace

NpzArchive::NpzArchive(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  file_bytes_ = std::filesystem::file_size(path_, ec);
  DGCN_CHECK(!ec, "{}: cannot open ({})", path_, ec.message());
  int code = 0;
  archive_ = zip_open(path_.c_str(), ZIP_RDONLY, &code);
  if (archive_ == nullptr) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    std::string reason = zip_error_strerror(&error);
    zip_error_fini(&error);
    const std::string hint = file_kind(path_) == FileKind::kZip ? "" : file_kind_hint(path_);
    throw Error(fmt::format("{}: not a readable .npz (zip) archive: {}{}", path_, reason,
                            hint.empty() ? "" : "; " + hint));
  }
  zip_int64_t n = zip_get_num_entries(archive_, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(archive_, static_cast<zip_uint64_t>(i), 0);
    if (name == nullptr) continue;
    std::string key = name;
    if (key.size() > 4 && key.ends_with(".npy")) key.resize(key.size() - 4);
    keys_.push_back(std::move(key));
  }
}

NpzArchive::~NpzArchive() {
  if (archive_ != nullptr) zip_discard(archive_);
}

bool NpzArchive::contains(const std::string& key) const {
  return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

template <class F>
auto NpzArchive::with_member(const std::string& key, F&& fn) const {
  const std::string what = fmt::format("{}: array '{}'", path_, key);
  DGCN_CHECK(contains(key), "{}: no array '{}' (arrays: {})", path_, key, join_keys(keys_));
  const std::string member = key + ".npy";
  zip_stat_t st;
  zip_stat_init(&st);
  DGCN_CHECK(zip_stat(archive_, member.c_str(), 0, &st) == 0, "{}: cannot stat member: {}", what,
             zip_strerror(archive_));
  DGCN_CHECK((st.valid & ZIP_STAT_SIZE) && (st.valid & ZIP_STAT_COMP_SIZE), "{}: member sizes unknown", what);
  DGCN_CHECK(st.comp_size <= file_bytes_, "{}: member claims {} compressed bytes in a {}-byte archive", what,
             st.comp_size, file_bytes_);
  if (st.comp_method == ZIP_CM_STORE) {
    DGCN_CHECK(st.size == st.comp_size, "{}: stored member declares {} bytes but occupies {}", what, st.size,
               st.comp_size);
  } else {
    DGCN_CHECK(st.size <= st.comp_size * kMaxDeflateRatio + 4096,
               "{}: member declares {} bytes, more than its {} compressed bytes can hold", what, st.size,
               st.comp_size);
  }
  std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(zip_fopen(archive_, member.c_str(), 0), &zip_fclose);
  DGCN_CHECK(file != nullptr, "{}: cannot open member: {}", what, zip_strerror(archive_));
  auto read = [&](void* dst, size_t n) -> size_t {
    zip_int64_t got = zip_fread(file.get(), dst, n);
    DGCN_CHECK(got >= 0, "{}: cannot read member: {}", what, zip_file_strerror(file.get()));
    return static_cast<size_t>(got);
  };
  return fn(read, st.size, what);
}

NpyArray NpzArchive::array(const std::string& key) const {
  return with_member(
      key, [](auto& read, uint64_t size, const std::string& what) { return read_npy(read, size, what); });
}

NpyHeader NpzArchive::header(const std::string& key) const {
  return with_member(
      key, [](auto& read, uint64_t, const std::string& what) { return read_npy_header(read, what); });
}

}  // namespace dgcn
