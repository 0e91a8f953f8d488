#include "train/start_gate.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <system_error>
#include <thread>

#include "base/error.h"

namespace dgcn {

std::filesystem::path start_gate_ready_file(const std::filesystem::path& gate) {
  return gate.string() + ".ready." + std::to_string(::getpid());
}

void wait_at_start_gate(const std::filesystem::path& gate, std::chrono::milliseconds timeout) {
  const std::filesystem::path ready = start_gate_ready_file(gate);
  DGCN_CHECK(std::ofstream(ready).good(), "start gate {}: cannot create {} (does its folder exist?)",
             gate.string(), ready.string());
  // Counted once the gate is open (or never): it goes when this call does.
  struct RemovedOnReturn {
    const std::filesystem::path& file;
    ~RemovedOnReturn() {
      std::error_code ignored;
      std::filesystem::remove(file, ignored);
    }
  } remove_ready{ready};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // A millisecond's sleep between looks: the waiting costs no CPU the other
  // program could use, and the first epoch starts at most 1 ms late.
  while (!std::filesystem::exists(gate)) {
    DGCN_CHECK(std::chrono::steady_clock::now() < deadline, "start gate {}: not opened within {} s",
               gate.string(), std::chrono::duration<double>(timeout).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace dgcn
