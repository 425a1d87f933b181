// The Python side of PyFunc: installs the runtime's py_func callback
// (runtime/framework/py_func_registry.h) when the binding is imported, and
// lets Python name the dispatcher that callback calls.
//
//   // tf_session.i, %init:
//   tensorweave::InstallPyFuncCallback();
//   # python/tensorweave/ops/script_ops.py, at import:
//   pywrap_tensorweave.TW_SetPyFuncDispatcher(_py_funcs)
//
// When a PyFunc kernel runs (on an inter-op thread, the GIL free because
// Session.run releases it), the callback takes the GIL, converts the inputs
// to ndarrays (swig/ndarray_tensor.h), calls dispatcher(token, [arrays]) and
// converts its answer back: a list gives one output per item, an ndarray
// one output, an ndarray holding a single None none at all. A Python
// exception becomes TensorFlow's status for it: ValueError and TypeError
// INVALID_ARGUMENT, StopIteration OUT_OF_RANGE, MemoryError
// RESOURCE_EXHAUSTED, NotImplementedError UNIMPLEMENTED, anything else
// UNKNOWN; the message holds the exception and its traceback.
#ifndef TENSORWEAVE_SWIG_PY_FUNC_HELPER_H_
#define TENSORWEAVE_SWIG_PY_FUNC_HELPER_H_

#include <Python.h>

#ifndef SWIG
namespace tensorweave {

// Installs the runtime's callback; called once from the module's init.
void InstallPyFuncCallback();

}  // namespace tensorweave
#endif  // SWIG

// Makes `dispatcher` (a callable taking (token, list of ndarrays)) the one
// every PyFunc kernel calls; the binding keeps a reference for the life of
// the process. A later call replaces it.
void TW_SetPyFuncDispatcher(PyObject* dispatcher);

#endif  // TENSORWEAVE_SWIG_PY_FUNC_HELPER_H_
