// What every harness shares: the input becomes the files a reader opens.
// A single-file reader gets the input as one file; a folder reader (OGB,
// GraphSAINT, Planetoid, MNIST) gets an input that is a sequence of
// [u32 little-endian length][bytes] records, one per file name of its
// layout, in the order given (missing records: the file is absent). The
// files live in a per-process folder under /dev/shm (or /tmp), rewritten on
// every input.
//
// The rule of every harness (Note [What a fuzz finding is]): reading a bad
// input may end only in dgcn::Error. Any other exception, a signal, a
// sanitizer report, an out-of-memory (libFuzzer -rss_limit_mb) or a hang
// (-timeout) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dgcn::fuzz {

// The folder the harness writes into (created once, emptied per input).
const std::string& scratch_folder();

// Writes `data` as scratch_folder()/name and returns the path.
std::string write_file(const std::string& name, const uint8_t* data, size_t size);

// Splits `data` into records and writes them as `names` (relative paths;
// parent folders created). Returns the folder.
std::string write_files(const std::vector<std::string>& names, const uint8_t* data, size_t size);

// Packs files into the record format (for making seed corpora).
std::string pack(const std::vector<std::string>& contents);

}  // namespace dgcn::fuzz
