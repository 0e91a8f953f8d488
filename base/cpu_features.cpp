#include "base/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace dgcn {

CpuBf16Support cpu_bf16_support() {
  CpuBf16Support out;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return out;
  // Leaf 7, subleaf 0: EDX bit 22 AMX-BF16, bit 24 AMX-TILE (Intel SDM, CPUID).
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  out.amx_bf16 = ((edx >> 22) & 1) != 0 && ((edx >> 24) & 1) != 0;
  // Leaf 7, subleaf 1: EAX bit 5 AVX512_BF16.
  __cpuid_count(7, 1, eax, ebx, ecx, edx);
  out.avx512_bf16 = ((eax >> 5) & 1) != 0;
#endif
  return out;
}

std::string cpu_bf16_description() {
  const CpuBf16Support s = cpu_bf16_support();
  return std::string("CPU bf16 (this machine): AVX512-BF16 ") + (s.avx512_bf16 ? "yes" : "no") +
         ", AMX-BF16 " + (s.amx_bf16 ? "yes" : "no") +
         (s.fast() ? "" : " (--precision bf16 runs correctly but without the fast bf16 matrix products)");
}

}  // namespace dgcn
