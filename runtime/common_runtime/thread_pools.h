// Process-wide thread pools for sessions. Sessions that ask for the same
// sizes share one pool, so creating hundreds of sessions creates no threads
// after the first. Pools live until the process exits.
//
//   Executor::Runner runner;
//   TW_RETURN_IF_ERROR(InterOpRunner(config.inter_op_parallelism_threads(), &runner));
//   const Eigen::ThreadPoolDevice* intra = nullptr;
//   TW_RETURN_IF_ERROR(IntraOpDevice(config.intra_op_parallelism_threads(), &intra));
//
// A pool's threads are started before the pool is built, so a system that
// refuses some of them (a memory or process limit) gives a smaller pool, and
// one that refuses all of them RESOURCE_EXHAUSTED, never an abort.
#ifndef TENSORWEAVE_COMMON_RUNTIME_THREAD_POOLS_H_
#define TENSORWEAVE_COMMON_RUNTIME_THREAD_POOLS_H_

#include "runtime/common_runtime/executor.h"
#include "runtime/framework/status.h"

namespace Eigen {
struct ThreadPoolDevice;
}

namespace tensorweave {

// The most threads one pool may be asked for; more is INVALID_ARGUMENT.
constexpr int kMaxPoolThreads = 1024;

// A runner scheduling closures on the shared inter-op pool with
// `num_threads` threads (<= 0: one per core).
Status InterOpRunner(int num_threads, Executor::Runner* runner);

// The shared Eigen device for kernels' intra-op parallelism with
// `num_threads` threads (<= 0: one per core).
Status IntraOpDevice(int num_threads, const Eigen::ThreadPoolDevice** device);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_THREAD_POOLS_H_
