// The restricted unpickler (datasets/pickle.cpp): hostile and lying pickles
// are refused by name, and pickled numpy arrays decode by the .npy reader's
// rules (byte order, Fortran order of any number of dimensions).
#include "datasets/pickle.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "base/error.h"
#include "dataset_files.h"

namespace dgcn {
namespace {

using testing::error_of;
using testing::TempDir;

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}
// A literal with its NULs (without the terminating one).
template <size_t N>
std::vector<std::byte> bytes_of(const char (&s)[N]) {
  return bytes_of(std::string(s, N - 1));
}

TEST(Pickle, RefusesWhatItDoesNotKnowAndNeverTrustsSizes) {
  // GLOBAL 'os system': refused by name.
  EXPECT_NE(error_of([] {
              detail::pickle::load(bytes_of("\x80\x02"
                                            "cos\nsystem\n."),
                                   "p");
            }).find("'os.system' is not allowed"),
            std::string::npos);
  // Truncated: BINUNICODE claims 1000 bytes.
  EXPECT_NE(error_of([] {
              detail::pickle::load(bytes_of("\x80\x02X\xe8\x03\x00\x00"
                                            "ab"),
                                   "p");
            }).find("truncated"),
            std::string::npos);
  // Stack underflow and unknown opcodes.
  EXPECT_NE(error_of([] { detail::pickle::load(bytes_of("\x80\x02t."), "p"); }).find("no MARK"),
            std::string::npos);
  EXPECT_NE(error_of([] { detail::pickle::load(bytes_of("\x80\x02\xff."), "p"); }).find("opcode 0xff"),
            std::string::npos);
  // A list that contains itself loads (values refer by index) without recursing.
  const detail::pickle::Pickle p = detail::pickle::load(bytes_of("\x80\x02]q\x00h\x00"
                                                                 "a."),
                                                        "p");
  EXPECT_EQ(p.at(p.root()).kind, detail::pickle::Kind::kList);
  EXPECT_EQ(p.at(p.root()).items.front(), p.root());
  // A csr_matrix claiming 2^40 columns is refused before anything is allocated.
  TempDir dir;
  testing::run_python(
      "import pickle, scipy.sparse as sp, numpy as np\n"
      "m = sp.csr_matrix(np.zeros((1, 1), dtype=np.float32))\n"
      "m._shape = (1, 2**40)\n"
      "open('huge.pkl', 'wb').write(pickle.dumps(m, protocol=2))\n",
      dir.path());
  std::ifstream in((dir.path() / "huge.pkl").string(), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const detail::pickle::Pickle huge = detail::pickle::load(bytes_of(text), "huge.pkl");
  EXPECT_NE(error_of([&] {
              detail::pickle::as_dense_matrix(huge, huge.root(), "x", 1 << 20);
            }).find("more than this file"),
            std::string::npos);
}

std::vector<std::byte> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path.string(), std::ios::binary);
  return bytes_of(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
}

TEST(Pickle, ArraysDecodeByTheNpyRulesInEveryOrderAndDimension) {
  // Element [i][j][k] of the 2 x 3 x 4 array is 100 i + 10 j + k, stored
  // Fortran-order and big-endian: read back row-major and native.
  TempDir dir;
  testing::run_python(
      "import pickle, numpy as np\n"
      "i, j, k = np.meshgrid(range(2), range(3), range(4), indexing='ij')\n"
      "a = (100 * i + 10 * j + k)\n"
      "open('f3.pkl', 'wb').write(pickle.dumps(np.asfortranarray(a.astype('>f8')), protocol=2))\n"
      "open('i3.pkl', 'wb').write(pickle.dumps(np.asfortranarray(a.astype('<i2')), protocol=2))\n"
      "open('s.pkl', 'wb').write(pickle.dumps(np.array([b'ab'], dtype='S2'), protocol=2))\n"
      "open('f.pkl', 'wb').write(pickle.dumps(np.array([1e300]), protocol=2))\n",
      dir.path());
  std::vector<float> want_f;
  std::vector<int64_t> want_i;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        want_f.push_back(static_cast<float>(100 * i + 10 * j + k));
        want_i.push_back(100 * i + 10 * j + k);
      }
    }
  }
  const auto f3 = detail::pickle::load(file_bytes(dir.path() / "f3.pkl"), "f3.pkl");
  EXPECT_EQ(detail::pickle::array_as_float32(f3, f3.root(), "a"), want_f);
  const auto i3 = detail::pickle::load(file_bytes(dir.path() / "i3.pkl"), "i3.pkl");
  EXPECT_EQ(detail::pickle::array_as_int64(i3, i3.root(), "a"), want_i);
  // Floats where integers are wanted, byte strings, and float64 beyond
  // float32: the .npy conversions' errors, naming the file and the field.
  EXPECT_NE(error_of([&] {
              detail::pickle::array_as_int64(f3, f3.root(), "a");
            }).find("f3.pkl: a: expected an integer array, got dtype '>f8'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              detail::pickle::load(file_bytes(dir.path() / "s.pkl"), "s.pkl");
            }).find("is not a numeric type"),
            std::string::npos);
  const auto f = detail::pickle::load(file_bytes(dir.path() / "f.pkl"), "f.pkl");
  EXPECT_NE(error_of([&] { detail::pickle::array_as_float32(f, f.root(), "a"); }).find("beyond float32"),
            std::string::npos);
}

}  // namespace
}  // namespace dgcn
