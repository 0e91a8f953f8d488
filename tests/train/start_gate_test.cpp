#include "train/start_gate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "scratch_dir.h"

namespace dgcn {
namespace {

using Clock = std::chrono::steady_clock;

// Polls for `path` up to 30 s; true once it exists.
bool appears(const std::filesystem::path& path) {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (!std::filesystem::exists(path)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(StartGate, AnnouncesItselfAndWaitsUntilTheGateIsCreated) {
  testing::ScratchDir dir;
  const std::filesystem::path gate = dir.file("go");
  std::atomic<bool> through{false};
  Clock::time_point passed;
  std::thread waiter([&] {
    wait_at_start_gate(gate);
    passed = Clock::now();
    through = true;
  });
  ASSERT_TRUE(appears(start_gate_ready_file(gate)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(through) << "passed a gate nobody opened";
  const auto opened = Clock::now();
  std::ofstream(gate).put('\n');
  waiter.join();
  EXPECT_TRUE(through);
  EXPECT_GE(passed, opened);
  EXPECT_FALSE(std::filesystem::exists(start_gate_ready_file(gate))) << "the ready file outlived the wait";
  // The ready file names this process: the starter counts one per waiter.
  EXPECT_EQ(start_gate_ready_file(gate).filename().string(), "go.ready." + std::to_string(::getpid()));
}

TEST(StartGate, AGateNeverOpenedIsAnErrorNamingIt) {
  testing::ScratchDir dir;
  const std::string gate = dir.file("go");
  try {
    wait_at_start_gate(gate, std::chrono::milliseconds(20));
    FAIL() << "returned from a shut gate";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(gate), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not opened"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{}) << "a waiter that gave up left its ready file";
}

TEST(StartGate, AGateInAMissingFolderIsAnError) {
  testing::ScratchDir dir;
  EXPECT_THROW(wait_at_start_gate(dir.file("nowhere/go"), std::chrono::milliseconds(20)), Error);
}

}  // namespace
}  // namespace dgcn
