// The checkpoint writer thread (Note [Asynchronous checkpoints]): files land
// in the order they were handed over, the folder keeps the newest two (an
// in-epoch checkpoint sorts between its epoch's neighbours), best.pt is the
// one marked best, and a write error reaches the caller.
#include "train/checkpoint_writer.h"

#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "run_command.h"

namespace dgcn {
namespace {

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

CheckpointState at(int64_t epochs_done, int64_t batch = 0) {
  CheckpointState s;
  s.epoch = epochs_done;
  s.batch = batch;
  return s;
}

TEST(CheckpointWriter, WritesInOrderKeepsTheNewestTwoAndBest) {
  testing::ScratchDir dir;
  const std::string ckpt = dir.file("ckpt");
  {
    CheckpointWriter writer(ckpt);
    for (int64_t e = 1; e <= 4; ++e)
      writer.save(at(e), std::vector<char>(1000, static_cast<char>(e)), e == 2);
    writer.save(at(4, 7), std::vector<char>(10, 'm'), false);
    writer.flush();
    EXPECT_EQ(files_in(ckpt),
              (std::vector<std::string>{"best.pt", "checkpoint-000004.pt", "checkpoint-000005-b000007.pt"}));
    EXPECT_EQ(testing::read_text(ckpt + "/best.pt"), std::string(1000, '\2'));
    EXPECT_EQ(testing::read_text(ckpt + "/checkpoint-000005-b000007.pt"), "mmmmmmmmmm");
    writer.save(at(5), std::vector<char>(3, 'e'), false);
  }  // the destructor waits for the last write
  EXPECT_EQ(files_in(ckpt),
            (std::vector<std::string>{"best.pt", "checkpoint-000005-b000007.pt", "checkpoint-000005.pt"}));
  EXPECT_EQ(testing::read_text(ckpt + "/checkpoint-000005.pt"), "eee");
}

TEST(CheckpointWriter, AWriteErrorReachesTheNextCallNamingTheFolder) {
  testing::ScratchDir dir;
  const std::string file = dir.file("not-a-folder");
  std::ofstream(file) << "x";
  CheckpointWriter writer(file + "/ckpt");
  writer.save(at(1), std::vector<char>(10, 'a'), false);
  try {
    writer.flush();
    FAIL() << "writing under a file succeeded";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find(file + "/ckpt"), std::string::npos)
        << e.what_without_backtrace();
  }
  EXPECT_NO_THROW(writer.flush()) << "the error is reported once";
}

}  // namespace
}  // namespace dgcn
