// The runner's driver warm-up: harness work done once in RunnerService::initialize_gpu, before
// the thread census is sealed (runner/process_census.h), so that the threads the CUDA driver
// starts lazily on first use already exist and are trusted — then any thread that is new after a
// call is the candidate's, whatever its name.
//
// What the driver may start lazily, and what is done about it (not yet observed on the H200:
// `RunnerIntegrityGpu.NoDriverThreadStartsAfterTheWarmup` lists any thread the features below still
// start after this warm-up; the list here must follow what it finds on a new driver):
//   - the host-function worker: started on the first cudaLaunchHostFunc / cudaStreamAddCallback /
//     graph host node of the context and kept for its life. Pre-created: one no-op host function
//     on the call stream, and a graph with a host node.
//   - the event handler thread ("cuda-EvtHandlr"): started with the context (cudaFree(nullptr) in
//     initialize_gpu), nothing to do here.
//   - stream-ordered allocation (cudaMallocAsync) and its default pool, blocking-sync events,
//     graph instantiation and launch: each used once here, so that anything they start on first
//     use is started by the harness.
// A driver thread not covered here that appears inside a call would be reported as the
// candidate's (a false leftover_thread, never a missed one).
#pragma once

#include <cuda_runtime_api.h>

#include "core/result.h"

namespace ptxb {

// Uses each lazily started driver feature above once on `stream` (the runner's call stream) and
// waits for it. Harness work: call inside the harness's correlation scope, before sealing the
// thread census.
Status precreate_driver_threads(cudaStream_t stream);

}  // namespace ptxb
