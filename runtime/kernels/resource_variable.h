// The resource behind a resource variable (VarHandleOp), shared by the
// variable kernels (resource_variable_ops.cc) and the ResourceApply*
// optimizer kernels (training_ops.cc).
//
//   // In a kernel whose input 0 is a variable's handle:
//   std::shared_ptr<Var> var;
//   OP_REQUIRES_OK(ctx, LookupVar(ctx, 0, &var));
//   std::lock_guard<std::mutex> lock(var->variable.mu);
//   OP_REQUIRES_OK(ctx, var->CheckInitialized());
//   const Tensor& value = var->variable.tensor;
//
// A Var holds a Variable (runtime/framework/device.h), the same state a
// reference variable has, so the update kernels run one code path for both
// kinds. It follows the same copy-on-write rule: ReadVariableOp outputs the
// Tensor (sharing its buffer), and an update writes in place only while the
// variable is the buffer's sole holder, else into a fresh buffer that then
// replaces it, so a value already read never changes.
//
// As in TensorFlow, VarHandleOp only names the variable: AssignVariableOp
// creates it (in the device's ResourceMgr, where it stays across steps
// until DestroyResourceOp), and every other op fails on a variable that
// does not exist.
#ifndef TENSORWEAVE_KERNELS_RESOURCE_VARIABLE_H_
#define TENSORWEAVE_KERNELS_RESOURCE_VARIABLE_H_

#include <memory>
#include <string>

#include "runtime/framework/device.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/resource_mgr.h"

namespace tensorweave {

class Var : public ResourceBase {
 public:
  static const char* TypeName() { return "Var"; }

  explicit Var(const std::string& name) : variable(name) {}
  std::string DebugString() const override;

  // FAILED_PRECONDITION unless the variable holds a value. Call with
  // variable.mu held.
  Status CheckInitialized() const;

  Variable variable;
};

// The variable that the handle in input `input` names. FAILED_PRECONDITION
// with TensorFlow's message ("Could not find variable ... it can also mean
// the variable is uninitialized") when it does not exist.
Status LookupVar(OpKernelContext* ctx, int input, std::shared_ptr<Var>* var);

// The same, but NOT_FOUND when it does not exist (what TensorFlow's update
// ops give).
Status LookupExistingVar(OpKernelContext* ctx, int input, std::shared_ptr<Var>* var);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_RESOURCE_VARIABLE_H_
