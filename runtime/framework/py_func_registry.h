// The process-wide hook through which PyFunc kernels call Python, so the
// runtime itself never links against Python: the Python binding installs
// one callback when it is imported, and every PyFunc / PyFuncStateless
// kernel calls it with the node's token and input values.
//
//   // swig/py_func_helper.cc, once at import:
//   SetPyFuncCallback([](const std::string& token, const std::vector<Tensor>& inputs,
//                        std::vector<Tensor>* outputs) {
//     ... take the GIL, look `token` up, call it, convert the results ...
//   });
//   // runtime/kernels/py_func_op.cc, on an inter-op thread:
//   Status status = CallPyFunc(token, inputs, &outputs);
//
// The callback may run on any thread, several at once; it must take the
// GIL itself. The caller of Session::Run must not hold the GIL (the binding
// releases it around every run), or a PyFunc step would wait forever.
#ifndef TENSORWEAVE_FRAMEWORK_PY_FUNC_REGISTRY_H_
#define TENSORWEAVE_FRAMEWORK_PY_FUNC_REGISTRY_H_

#include <functional>
#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {

// Runs the Python function registered under `token` on `inputs`, filling
// `outputs` (cleared first); the status maps a Python exception to its
// TensorFlow code.
using PyFuncCallback = std::function<Status(
    const std::string& token, const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs)>;

// Installs `callback` for the life of the process, replacing any earlier
// one (an empty function uninstalls).
void SetPyFuncCallback(PyFuncCallback callback);

// Calls the installed callback. Without one (a GraphDef holding a PyFunc
// run from C, or a Python process that has not imported the binding)
// INVALID_ARGUMENT naming the token, as TensorFlow reports its missing
// trampoline.
Status CallPyFunc(const std::string& token, const std::vector<Tensor>& inputs,
                  std::vector<Tensor>* outputs);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_PY_FUNC_REGISTRY_H_
