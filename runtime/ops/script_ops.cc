// Script ops: PyFunc and PyFuncStateless call the Python function the
// Python binding registered under `token` (tf.py_func, tf.numpy_function).
// Their outputs' shapes are unknown until the function runs.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {

// Stateful: a Python function may read or change anything, so two calls
// are never merged, folded or dropped.
REGISTER_OP("PyFunc")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("token: string")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .SetShapeFn(shape_fns::UnknownShape)
    .SetIsStateful()
    .Doc("Calls the Python function registered under `token` on the inputs (as numpy arrays).");

// tf.py_func(..., stateful=False): the same call, which the optimizer may
// treat as a pure function of its inputs.
REGISTER_OP("PyFuncStateless")
    .Input("input: Tin")
    .Output("output: Tout")
    .Attr("token: string")
    .Attr("Tin: list(type) >= 0")
    .Attr("Tout: list(type) >= 0")
    .SetShapeFn(shape_fns::UnknownShape)
    .Doc("Calls the Python function registered under `token`; it must be a pure function.");

}  // namespace tensorweave
