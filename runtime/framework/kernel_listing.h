// The kernel registry (op_kernel.cc) as TensorFlow's KernelList message, for
// callers that list kernels: TF_GetAllRegisteredKernels and
// TF_GetRegisteredKernelsForOp.
//
//   KernelList matmul = RegisteredKernels("MatMul");  // one per device and T
#ifndef TENSORWEAVE_FRAMEWORK_KERNEL_LISTING_H_
#define TENSORWEAVE_FRAMEWORK_KERNEL_LISTING_H_

#include <string>
#include <vector>

#include "runtime/framework/op_kernel.h"
#include "tensorweave/proto/kernel_def.pb.h"

namespace tensorweave {

// Every registration's definition, ordered by op name (op_kernel.cc).
std::vector<KernelDefBuilder> ListKernelDefs();

// The registered kernels of `op_name`, or of every op when it is empty,
// each with its type constraints.
KernelList RegisteredKernels(const std::string& op_name);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_KERNEL_LISTING_H_
