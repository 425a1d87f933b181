// PyFunc and PyFuncStateless: hand the inputs to the Python function
// registered under the node's token (through the process-wide callback of
// runtime/framework/py_func_registry.h) and check what comes back against
// the node's Tout.
#include <string>
#include <vector>

#include "runtime/framework/op_kernel.h"
#include "runtime/framework/py_func_registry.h"

namespace tensorweave {
namespace {

class PyFuncOp : public OpKernel {
 public:
  explicit PyFuncOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("token", &token_));
  }

  void Compute(OpKernelContext* c) override {
    std::vector<Tensor> inputs;
    inputs.reserve(c->num_inputs());
    for (int i = 0; i < c->num_inputs(); ++i) inputs.push_back(c->input(i));
    std::vector<Tensor> outputs;
    OP_REQUIRES_OK(c, CallPyFunc(token_, inputs, &outputs));
    OP_REQUIRES(
        c, static_cast<int>(outputs.size()) == c->num_outputs(),
        errors::InvalidArgument(token_, " returns ", outputs.size(), " values, but expects to see ",
                                c->num_outputs(), " values."));
    for (int i = 0; i < c->num_outputs(); ++i) {
      OP_REQUIRES(c, outputs[i].dtype() == output_type(i),
                  errors::InvalidArgument(i, "-th value returned by ", token_, " is ",
                                          DataTypeString(outputs[i].dtype()), ", but expects ",
                                          DataTypeString(output_type(i))));
    }
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, std::move(outputs[i]));
  }

 private:
  std::string token_;
};

REGISTER_KERNEL_BUILDER(Name("PyFunc").Device(DEVICE_CPU), PyFuncOp);
REGISTER_KERNEL_BUILDER(Name("PyFuncStateless").Device(DEVICE_CPU), PyFuncOp);

}  // namespace
}  // namespace tensorweave
