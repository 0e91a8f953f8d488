#include "base/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

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

TEST(AtomicFile, SigtermLeavesNoTemporaryBehind) {
  ScratchDir dir;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    remove_temporary_files_on_signals();
    AtomicFile out(dir.file("big.bin"));
    out.write("partial", 7);
    const char c = 'r';
    if (::write(ready[1], &c, 1) != 1) _exit(3);
    for (;;) pause();  // killed mid-write, as Ctrl-C or the launcher would
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_EQ(files_in(dir), 1) << "the temporary exists while the writer runs";
  ASSERT_EQ(kill(child, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "ended by the signal itself";
  EXPECT_EQ(files_in(dir), 0) << "the handler removed the temporary";
}

TEST(AtomicFolder, CommitPutsTheWholeFolderInPlaceOfAMissingOrEmptyOne) {
  ScratchDir dir;
  for (const bool empty_target : {false, true}) {
    const std::string target = dir.file(empty_target ? "empty" : "fresh");
    if (empty_target) std::filesystem::create_directory(target);
    AtomicFolder out(target + "/");  // a trailing slash names the same folder
    write_file_atomically(out.path() + "/a.txt", std::string_view("a"));
    EXPECT_EQ(std::filesystem::exists(target + "/a.txt"), false) << "nothing at the target before commit";
    out.commit();
    EXPECT_EQ(read(target + "/a.txt"), "a");
  }
  EXPECT_EQ(ScratchDir::entries_of(dir.path()), (std::vector<std::string>{"empty", "fresh"}));
}

TEST(AtomicFolder, AFailureLeavesTheTargetAsItWasAndNoTemporary) {
  ScratchDir dir;
  const std::string used = dir.file("used");
  std::filesystem::create_directory(used);
  std::ofstream(used + "/mine.txt") << "mine";
  {
    AtomicFolder out(used);
    write_file_atomically(out.path() + "/a.txt", std::string_view("a"));
    try {
      out.commit();
      FAIL() << "replaced a folder that holds files";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(used + ": it is a folder that is not empty"), std::string::npos)
          << e.what();
    }
  }
  {
    AtomicFolder never(dir.file("never"));  // an exception before commit, as in a failed writer
    write_file_atomically(never.path() + "/a.txt", std::string_view("a"));
  }
  EXPECT_EQ(ScratchDir::entries_of(dir.path()), std::vector<std::string>{"used"});
  EXPECT_EQ(ScratchDir::entries_of(used), std::vector<std::string>{"mine.txt"});
}

TEST(AtomicFolder, SigintRemovesTheTemporaryFolderWithItsFiles) {
  ScratchDir dir;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    remove_temporary_files_on_signals();
    AtomicFolder out(dir.file("parts"));
    write_file_atomically(out.path() + "/part-000.gcn", std::string_view("done"));
    AtomicFile half(out.path() + "/part-001.gcn");
    half.write("half", 4);
    const char c = 'r';
    if (::write(ready[1], &c, 1) != 1) _exit(3);
    for (;;) pause();
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(dir.entries().size(), 1u) << "the temporary folder exists while the writer runs";
  EXPECT_EQ(ScratchDir::entries_of(dir.file(dir.entries()[0])).size(), 2u);
  ASSERT_EQ(kill(child, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "ended by the signal itself";
  EXPECT_TRUE(dir.entries().empty()) << "the handler removed the folder and what it held";
}

}  // namespace
}  // namespace dgcn
