#include "datasets/npy.h"

#include <gtest/gtest.h>

#include <fstream>

#include "dataset_files.h"
#include "datasets/npz.h"

namespace dgcn {
namespace {

using testing::error_of;
using testing::TempDir;

class Npy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    testing::run_python(R"(
import numpy as np, scipy.sparse as sp
np.save('f4.npy', np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
np.save('f8_fortran.npy', np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)))
np.save('i4_big.npy', np.array([1, -2, 70000], dtype='>i4'))
i, j, k = np.meshgrid(range(2), range(3), range(4), indexing='ij')
np.save('i2_fortran3.npy', np.asfortranarray((100 * i + 10 * j + k).astype('>i2')))
np.save('u8.npy', np.array([0, 2**40], dtype=np.uint64))
np.save('b1.npy', np.array([True, False, True]))
np.save('s3.npy', np.array('csr', dtype='S3'))
np.save('u7.npy', np.array(['abc'], dtype='<U7'))
np.save('empty.npy', np.zeros((0, 5), dtype=np.float32))
a = dict(x=np.arange(5, dtype=np.int64), y=np.ones((3, 2), dtype=np.float32))
np.savez('stored.npz', **a)
np.savez_compressed('deflated.npz', **a)
m = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 2], [0, 0, 0]], dtype=np.float32))
sp.save_npz('scipy.npz', m)                     # compressed (the default)
sp.save_npz('scipy_stored.npz', m, compressed=False)
)",
                        dir_->path());
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const std::string& name) { return *dir_ / name; }
  static std::string bytes_of(const std::string& name) {
    std::ifstream in(file(name), std::ios::binary);
    return {(std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()};
  }
  static TempDir* dir_;
};
TempDir* Npy::dir_ = nullptr;

TEST_F(Npy, ReadsDtypesShapesByteOrderAndFortranOrder) {
  NpyArray f4 = read_npy_file(file("f4.npy"));
  EXPECT_EQ(f4.dtype(), DType::kFloat32);
  EXPECT_EQ(f4.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_FLOAT_EQ(f4.as<float>()[5], 1.25f);

  NpyArray f8 = read_npy_file(file("f8_fortran.npy"));
  EXPECT_TRUE(f8.header.descr == "<f8");
  auto v = f8.as<double>();  // converted to row-major
  EXPECT_EQ(std::vector<double>(v.begin(), v.end()), (std::vector<double>{0, 1, 2, 3, 4, 5}));

  EXPECT_EQ(to_int64(read_npy_file(file("i4_big.npy")), "i4"), (std::vector<int64_t>{1, -2, 70000}));
  // Fortran order of three dimensions, big-endian: element [i][j][k] is
  // 100 i + 10 j + k, read back row-major.
  NpyArray f3 = read_npy_file(file("i2_fortran3.npy"));
  EXPECT_EQ(f3.shape(), (std::vector<int64_t>{2, 3, 4}));
  std::vector<int64_t> row_major;
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t c = 0; c < 4; ++c) row_major.push_back(100 * a + 10 * b + c);
    }
  }
  EXPECT_EQ(to_int64(f3, "f3"), row_major);
  EXPECT_EQ(to_int64(read_npy_file(file("u8.npy")), "u8"), (std::vector<int64_t>{0, int64_t{1} << 40}));
  EXPECT_EQ(to_int64(read_npy_file(file("b1.npy")), "b1"), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(to_strings(read_npy_file(file("s3.npy")), "s3"), (std::vector<std::string>{"csr"}));
  NpyArray empty = read_npy_file(file("empty.npy"));
  EXPECT_EQ(empty.count(), 0);
  EXPECT_EQ(empty.shape(), (std::vector<int64_t>{0, 5}));

  Buffer f = to_float32(read_npy_file(file("i4_big.npy")), "i4");
  EXPECT_EQ(f.as<float>()[1], -2.0f);
  EXPECT_NE(
      error_of([&] { to_int64(f4, "f4.npy"); }).find("f4.npy: expected an integer array, got dtype '<f4'"),
      std::string::npos);
}

TEST_F(Npy, RejectsUnsupportedDtypes) {
  std::string err = error_of([&] { read_npy_file(file("u7.npy")); });
  EXPECT_NE(err.find("u7.npy: npy dtype '<U7' is not supported"), std::string::npos) << err;
}

TEST_F(Npy, TruncatedDataIsAnErrorNamingTheSizes) {
  std::string bytes = bytes_of("f4.npy");
  testing::write_text(file("cut.npy"), bytes.substr(0, bytes.size() - 4));
  std::string err = error_of([&] { read_npy_file(file("cut.npy")); });
  EXPECT_NE(
      err.find("cut.npy: npy header announces shape (2, 3) of <f4 = 24 data bytes, but the stream holds 20"),
      std::string::npos)
      << err;
  testing::write_text(file("header_cut.npy"), bytes.substr(0, 30));
  err = error_of([&] { read_npy_file(file("header_cut.npy")); });
  EXPECT_NE(err.find("header_cut.npy: npy header truncated"), std::string::npos) << err;
}

TEST_F(Npy, HeaderLyingAboutShapeFailsBeforeAllocating) {
  std::string bytes = bytes_of("f4.npy");
  // Same header length: "(2, 3)" -> "(9999999999999, 3)" would change it, so
  // overwrite inside the padding-aligned dict and keep its length.
  std::string lie = bytes;
  size_t at = lie.find("(2, 3), }");
  ASSERT_NE(at, std::string::npos);
  lie.replace(at, 9, "(99999999999, 3),}");
  lie.erase(lie.find('\n') - 9, 9);  // keep the header length unchanged
  testing::write_text(file("lie.npy"), lie);
  std::string err = error_of([&] { read_npy_file(file("lie.npy")); });
  EXPECT_NE(
      err.find("lie.npy: npy header announces shape (99999999999, 3) of <f4 = 1199999999988 data bytes"),
      std::string::npos)
      << err;

  std::string overflow = bytes;
  at = overflow.find("(2, 3), }");
  overflow.replace(at, 9, "(4611686018427387904, 4),}");
  overflow.erase(overflow.find('\n') - 17, 17);
  testing::write_text(file("overflow.npy"), overflow);
  err = error_of([&] { read_npy_file(file("overflow.npy")); });
  EXPECT_NE(err.find("is larger than any file"), std::string::npos) << err;
}

TEST_F(Npy, NpzReadsStoredAndDeflatedMembers) {
  for (const char* name : {"stored.npz", "deflated.npz"}) {
    NpzArchive npz(file(name));
    EXPECT_EQ(npz.keys(), (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(to_int64(npz.array("x"), "x"), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(npz.header("y").shape, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(npz.array("y").as<float>()[5], 1.0f);
    std::string err = error_of([&] { npz.array("z"); });
    EXPECT_NE(err.find(std::string(name) + ": no array 'z' (arrays: x, y)"), std::string::npos) << err;
  }
  for (const char* name : {"scipy.npz", "scipy_stored.npz"}) {
    NpzArchive npz(file(name));
    EXPECT_EQ(to_strings(npz.array("format"), "format"), (std::vector<std::string>{"csr"}));
    EXPECT_EQ(to_int64(npz.array("indptr"), "indptr"), (std::vector<int64_t>{0, 1, 3, 3}));
  }
  std::string err = error_of([&] { NpzArchive npz(file("f4.npy")); });
  EXPECT_NE(err.find("f4.npy: not a readable .npz (zip) archive"), std::string::npos) << err;
}

TEST_F(Npy, TruncatedNpzIsAnError) {
  std::string bytes = bytes_of("deflated.npz");
  testing::write_text(file("cut.npz"), bytes.substr(0, bytes.size() / 2));
  std::string err = error_of([&] {
    NpzArchive npz(file("cut.npz"));
    npz.array("y");
  });
  EXPECT_NE(err.find("cut.npz"), std::string::npos) << err;
}

}  // namespace
}  // namespace dgcn
