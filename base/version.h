// dgcn's version (CMake's project version), for --version and the records a
// run leaves behind (checkpoints, metrics, summaries).
#pragma once

namespace dgcn {

const char* dgcn_version();  // e.g. "0.1.0"

}  // namespace dgcn
