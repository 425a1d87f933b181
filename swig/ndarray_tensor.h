// numpy arrays ⇄ TF_Tensors for the binding, without copies where memory
// allows: a C-contiguous, aligned, native-order array is fed by wrapping its
// buffer (the tensor holds a reference to the array until the runtime lets go
// of the memory), and a fetched tensor becomes an ndarray over the tensor's
// own buffer (the C API guarantees fetched tensors share nothing with the
// session, so handing the memory to numpy is safe).
#ifndef TENSORWEAVE_SWIG_NDARRAY_TENSOR_H_
#define TENSORWEAVE_SWIG_NDARRAY_TENSOR_H_

#include <Python.h>

#include <memory>

#include "c_api/c_api.h"

namespace tensorweave {

// An owned reference, released with Py_XDECREF (the GIL must be held).
struct PyDecref {
  void operator()(PyObject* object) const { Py_XDECREF(object); }
};
using PyRef = std::unique_ptr<PyObject, PyDecref>;

// False once the interpreter is shutting down: callbacks from runtime
// threads must not touch Python objects any more.
bool InterpreterAlive();

// Imports numpy's C API; false (with a Python error set) when it fails.
bool InitNumpy();

// A new tensor for `value` (an ndarray, or anything np.asarray accepts):
// numbers and bools by wrapping or copying their buffer, str/bytes/object
// arrays as TF_STRING. Returns NULL with a Python error set on failure.
TF_Tensor* NdarrayToTensor(PyObject* value);

// Takes ownership of `tensor` and returns its value: an ndarray (a numpy
// scalar for rank 0, bytes objects for strings; for a resource handle, as
// TensorFlow, a 1-D array of the serialized ResourceHandleProto's bytes of
// dtype [("resource", uint8, 1)]). On failure the tensor is
// deleted and NULL is returned with a Python error set.
PyObject* TensorToNdarray(TF_Tensor* tensor);

}  // namespace tensorweave

#endif  // TENSORWEAVE_SWIG_NDARRAY_TENSOR_H_
