// How a training process sets up LibTorch's OpenMP threads before anything
// else runs.
//
// Note [Passive OpenMP waits]
// LibTorch's OpenMP threads spin after each parallel region (libgomp's
// default). Training shares the cores with the sampler's worker thread,
// which the spinning threads starve: a products epoch ([15,10,5], batch
// 1024, classic model, 2 cores) took 43.9 s with spinning and 36.8 s with
// OMP_WAIT_POLICY=PASSIVE. libgomp reads the variable when it is loaded,
// before main, so when the user has not chosen a policy the process sets it
// and re-executes itself once (ranks started by the launcher inherit it).
#pragma once

namespace dgcn {

// Call first thing in main with main's argv. Returns only when the policy
// was already chosen (by the user or by an earlier execution of this
// function), or when the re-execution failed (then training goes on with
// libgomp's default).
void reexec_with_passive_omp_waits(char** argv);

}  // namespace dgcn
