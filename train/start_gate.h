// A start gate for timing runs of programs started together
// (bench/python_epoch_bench.py --side-by-side: dgcn-train beside the Python
// example). Each waits at the gate once it is built, right before its first
// epoch, until the starter opens it: their first epochs then begin within a
// millisecond of each other, where start-ups that differ by seconds (an
// interpreter's imports) would otherwise decide which runs alone first.
//
// The protocol, also followed by examples/gcn_ddp.py --start-gate:
//   a process arriving at gate G creates the empty file G.ready.<pid>;
//   it waits until G exists, then removes its ready file;
//   the starter counts the ready files, then creates G.
#pragma once

#include <chrono>
#include <filesystem>

namespace dgcn {

// The file this process creates on arriving at `gate`.
std::filesystem::path start_gate_ready_file(const std::filesystem::path& gate);

// Announces this process at `gate` and returns once `gate` exists (checked
// every millisecond). Throws dgcn::Error naming the gate when the ready file
// cannot be made (no such folder) or the gate stays shut past `timeout`.
void wait_at_start_gate(const std::filesystem::path& gate,
                        std::chrono::milliseconds timeout = std::chrono::minutes(10));

}  // namespace dgcn
