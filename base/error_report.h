// Error lines of a job's ranks, said once per job.
//
// Note [One error per job]
// Ranks of one job often fail for the same reason (a damaged store, a resume
// that does not fit): each would print the same `<binary>: error: ...` line.
// The built-in launcher (distributed/launcher.h) hands its ranks one end of
// a datagram socket, named by DGCN_ERROR_SOCKET; a rank's error ladder
// (apps/cli/cli.h run_main) sends its line there instead of printing it, and
// the launcher prints each distinct line once when the ranks have stopped.
// A rank started any other way (torchrun, by hand), or whose send fails,
// prints its line itself, so no error is ever lost.
#pragma once

#include <string>

namespace dgcn {

// The environment variable naming the socket's file descriptor in a rank.
inline constexpr const char* kErrorSocketVariable = "DGCN_ERROR_SOCKET";

// Writes `line` (ending in '\n') to this job's launcher when there is one,
// else to stderr; in one write(2) either way, so lines never interleave.
void report_error_line(const std::string& line);

}  // namespace dgcn
