// What the CPU this process runs on can do for bfloat16 arithmetic (a fact
// of the machine, read with cpuid, not of the build): --version prints it
// and a bf16 run's summary says whether the fast path was available.
#pragma once

#include <string>

namespace dgcn {

struct CpuBf16Support {
  bool avx512_bf16 = false;  // AVX512_BF16: vdpbf16ps, bf16 <-> fp32 conversions
  bool amx_bf16 = false;     // AMX-BF16 (with AMX-TILE): tile matrix products, used by oneDNN's bf16 GEMM
  // AVX512-BF16 is what makes bf16 pay: oneDNN's bf16 GEMM uses it (2.3x
  // fp32 on an AMD EPYC without AMX) and AMX where present, and the kernels
  // convert with it. Without it bf16 is still correct, converted in software,
  // and slower than fp32.
  bool fast() const { return avx512_bf16; }
};

// This CPU's support (x86-64 cpuid; false on other architectures).
CpuBf16Support cpu_bf16_support();

// One line for --version, e.g. "CPU bf16: AVX512-BF16 yes, AMX-BF16 yes".
std::string cpu_bf16_description();

}  // namespace dgcn
