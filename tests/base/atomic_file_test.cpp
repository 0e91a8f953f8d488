#include "base/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

using testing::ScratchDir;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int files_in(const ScratchDir& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) n += e.is_regular_file();
  return n;
}

TEST(AtomicFile, CommitReplacesTheTargetWithEverythingWritten) {
  ScratchDir dir;
  const std::string target = dir.file("out.bin");
  std::ofstream(target) << "old";
  {
    AtomicFile out(target);
    out.write("new ", 4);
    out.write("content", 7);
    EXPECT_EQ(read(target), "old") << "the target is untouched until commit";
    EXPECT_TRUE(std::filesystem::exists(out.temp_path()));
    out.commit();
  }
  EXPECT_EQ(read(target), "new content");
  EXPECT_EQ(files_in(dir), 1) << "no temporary left behind";
}

TEST(AtomicFile, WithoutCommitTheOldFileStaysAndTheTemporaryGoes) {
  ScratchDir dir;
  const std::string target = dir.file("out.bin");
  std::ofstream(target) << "old";
  try {
    AtomicFile out(target);
    out.write("half", 4);
    throw Error("the writer failed");
  } catch (const Error&) {
  }
  EXPECT_EQ(read(target), "old");
  EXPECT_EQ(files_in(dir), 1);
}

TEST(AtomicFile, WholeFileHelperAndAMissingFolderIsAnErrorNamingTheTarget) {
  ScratchDir dir;
  write_file_atomically(dir.file("a.txt"), std::string_view("hello"));
  EXPECT_EQ(read(dir.file("a.txt")), "hello");
  const std::string bad = dir.file("no/such/folder/a.txt");
  try {
    write_file_atomically(bad, std::string_view("x"));
    FAIL() << "wrote into a missing folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dgcn
