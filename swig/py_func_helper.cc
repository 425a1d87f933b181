#include "swig/py_func_helper.h"

#include <memory>
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "runtime/framework/py_func_registry.h"
#include "swig/ndarray_tensor.h"

namespace tensorweave {
namespace {

// Set once by TW_SetPyFuncDispatcher; read and replaced under the GIL.
PyObject* dispatcher = nullptr;

// Holds the GIL for the lifetime of the object, from any thread.
class WithGil {
 public:
  WithGil() : state_(PyGILState_Ensure()) {}
  ~WithGil() { PyGILState_Release(state_); }
  WithGil(const WithGil&) = delete;
  WithGil& operator=(const WithGil&) = delete;

 private:
  PyGILState_STATE state_;
};

std::string PythonText(PyObject* object) {
  PyRef text(object == nullptr ? nullptr : PyObject_Str(object));
  if (!text) {
    PyErr_Clear();
    return "<unprintable>";
  }
  const char* utf8 = PyUnicode_AsUTF8(text.get());
  if (utf8 == nullptr) {
    PyErr_Clear();
    return "<unprintable>";
  }
  return utf8;
}

// "ValueError: message\n" and the formatted traceback.
std::string DescribeException(PyObject* type, PyObject* value, PyObject* traceback) {
  std::string text =
      StrCat(reinterpret_cast<PyTypeObject*>(type)->tp_name, ": ", PythonText(value), "\n");
  PyRef module(PyImport_ImportModule("traceback"));
  PyRef lines(module ? PyObject_CallMethod(module.get(), "format_exception", "OOO", type,
                                           value ? value : Py_None, traceback ? traceback : Py_None)
                     : nullptr);
  PyRef joined(lines ? PyUnicode_Join(PyRef(PyUnicode_FromString("")).get(), lines.get())
                     : nullptr);
  if (joined) {
    text += PythonText(joined.get());
  } else {
    PyErr_Clear();
  }
  return text;
}

// The pending Python exception as TensorFlow reports it from a py_func.
Status StatusFromPythonError() {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  PyRef type_ref(type), value_ref(value), traceback_ref(traceback);
  if (type == nullptr) return errors::Internal("A py_func failed without a Python exception");
  const std::string message = DescribeException(type, value, traceback);
  if (PyErr_GivenExceptionMatches(type, PyExc_ValueError) ||
      PyErr_GivenExceptionMatches(type, PyExc_TypeError)) {
    return errors::InvalidArgument(message);
  }
  if (PyErr_GivenExceptionMatches(type, PyExc_StopIteration)) return errors::OutOfRange(message);
  if (PyErr_GivenExceptionMatches(type, PyExc_MemoryError)) {
    return errors::ResourceExhausted(message);
  }
  if (PyErr_GivenExceptionMatches(type, PyExc_NotImplementedError)) {
    return errors::Unimplemented(message);
  }
  return errors::Unknown(message);
}

Status InputsToPython(const std::vector<Tensor>& inputs, PyRef* list) {
  list->reset(PyList_New(static_cast<Py_ssize_t>(inputs.size())));
  if (!*list) return StatusFromPythonError();
  for (size_t i = 0; i < inputs.size(); ++i) {
    TF_Tensor* tensor = nullptr;
    TW_RETURN_IF_ERROR(c_api::TensorToC(inputs[i], &tensor));
    PyObject* array = TensorToNdarray(tensor);  // takes the tensor
    if (array == nullptr) return StatusFromPythonError();
    PyList_SET_ITEM(list->get(), static_cast<Py_ssize_t>(i), array);
  }
  return Status::OK();
}

Status OneOutputFromPython(PyObject* value, const std::string& token, Tensor* out) {
  TF_Tensor* tensor = NdarrayToTensor(value);
  if (tensor == nullptr) {
    const Status error = StatusFromPythonError();
    return errors::Internal("Unsupported object returned by ", token, ": ", error.message());
  }
  const Status status = c_api::TensorFromC(*tensor, out);
  TF_DeleteTensor(tensor);
  return status;
}

// A 0-d object array holding None: what a function returning None gives.
bool IsSingleNone(PyObject* value) {
  PyRef ndim(PyObject_GetAttrString(value, "ndim"));
  if (!ndim || PyLong_AsLong(ndim.get()) != 0) {
    PyErr_Clear();
    return false;
  }
  PyRef item(PyObject_CallMethod(value, "item", nullptr));
  if (!item) {
    PyErr_Clear();
    return false;
  }
  return item.get() == Py_None;
}

Status OutputsFromPython(PyObject* result, const std::string& token, std::vector<Tensor>* outputs) {
  if (PyList_Check(result)) {
    const Py_ssize_t count = PyList_GET_SIZE(result);
    outputs->resize(count);
    for (Py_ssize_t i = 0; i < count; ++i) {
      TW_RETURN_IF_ERROR(OneOutputFromPython(PyList_GET_ITEM(result, i), token, &(*outputs)[i]));
    }
    return Status::OK();
  }
  if (IsSingleNone(result)) return Status::OK();
  outputs->resize(1);
  return OneOutputFromPython(result, token, &(*outputs)[0]);
}

Status CallDispatcher(const std::string& token, const std::vector<Tensor>& inputs,
                      std::vector<Tensor>* outputs) {
  if (!InterpreterAlive()) {
    return errors::FailedPrecondition("Python interpreter state is not initialized. ",
                                      "The process may be terminated.");
  }
  WithGil gil;
  if (dispatcher == nullptr) {
    return errors::InvalidArgument("Missing py trampoline: tensorweave.ops.script_ops has not ",
                                   "been imported, so ", token, " cannot run");
  }
  PyRef arguments;
  TW_RETURN_IF_ERROR(InputsToPython(inputs, &arguments));
  PyRef result(PyObject_CallFunction(dispatcher, "sO", token.c_str(), arguments.get()));
  if (!result) return StatusFromPythonError();
  return OutputsFromPython(result.get(), token, outputs);
}

}  // namespace

void InstallPyFuncCallback() { SetPyFuncCallback(CallDispatcher); }

}  // namespace tensorweave

void TW_SetPyFuncDispatcher(PyObject* new_dispatcher) {
  Py_XINCREF(new_dispatcher);
  Py_XSETREF(tensorweave::dispatcher, new_dispatcher);
}
