// How a training binary (dgcn-train, dgcn-predict, dgcn-mnist) sets up its math
// libraries before anything else runs; a main's act, so it lives beside the
// mains, not in the library (a Python user keeps their own environment): environment variables that
// LibTorch's OpenMP and MKL read when they are loaded, before main, so the process sets them and re-executes
// itself once (ranks started by the launcher inherit them). A variable the user set is left alone.
//
// Note [Passive OpenMP waits]
// LibTorch's OpenMP threads spin after each parallel region (libgomp's
// default). Training shares the cores with the sampler's worker thread,
// which the spinning threads starve: a products epoch ([15,10,5], batch
// 1024, classic model, 2 cores) took 43.9 s with spinning and 36.8 s with
// OMP_WAIT_POLICY=PASSIVE.
//
// Note [Results independent of the thread count]
// MKL splits a GEMM's reduction by thread count (and, with MKL_DYNAMIC, by
// how busy the machine is), so the same seed gave other weights at
// --threads 1 and 2 (small preset, 5 batches: 832dad0e.. vs 947f2d96..).
// MKL_CBWR=AUTO,STRICT (conditional numerical reproducibility, strict mode)
// fixes the reduction order whatever the threads: both give 151ea396..,
// at no measurable cost on the products preset (40 batches, 5 runs
// alternating: median 11.57 s vs 11.97 s without). Our own CPU kernels
// give each output row to one thread and so never depended on it.
// Without it, MKL's reproducibility mode is off (MKL_VERBOSE: CNR:OFF). On
// an AMD EPYC (AVX2) dgcn-mnist, which did not re-execute, gave other
// weights with 1 and 2 threads (1 epoch: a423417a.. vs 576026bc..), so two
// launchers of one rank each (2 threads a rank on 2 cores) disagreed with
// one launcher of two ranks (1 thread each); with it, both give a423417a.
#pragma once

namespace dgcn::cli {

// Call first thing in main with main's argv: sets OMP_WAIT_POLICY=PASSIVE
// and MKL_CBWR=AUTO,STRICT where unset and re-executes once. Returns when
// both were already set (by the user or an earlier execution), or when the
// re-execution failed (then training goes on with the libraries' defaults).
void reexec_with_training_environment(char** argv);

}  // namespace dgcn::cli
