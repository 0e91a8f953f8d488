#pragma once
// DGCN_SIMD_CLONES: compile a loop once per x86-64 level (v4 = AVX-512, v3 =
// AVX2, default); the dynamic loader picks the best clone the CPU has through
// an ifunc resolver.
//
// Under ThreadSanitizer the resolver itself is instrumented and runs during
// relocation, before the TSan runtime is up, so every program holding a clone
// crashes before main (seen with gcc 12: a SIGSEGV in the resolver of
// spmm_kernel.cpp's scatter_i64). A TSan build therefore compiles the default
// clone only; the data races TSan looks for do not depend on the vector width.
#if defined(__SANITIZE_THREAD__)
#define DGCN_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DGCN_TSAN_BUILD 1
#endif
#endif

#if defined(DGCN_TSAN_BUILD) || !defined(__x86_64__)
#define DGCN_SIMD_CLONES
#else
#define DGCN_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
