#include "swig/partial_run_helper.h"

#include <vector>

#include "swig/ndarray_tensor.h"
#include "swig/tf_session_helper.h"

namespace {

// Tensors this call made or received, deleted unless handed on.
struct OwnedTensors {
  std::vector<TF_Tensor*> tensors;
  ~OwnedTensors() {
    for (TF_Tensor* tensor : tensors) {
      if (tensor != nullptr) TF_DeleteTensor(tensor);
    }
  }
};

}  // namespace

PyObject* TW_SessionPRunSetup_wrapper(TF_Session* session, PyObject* inputs, PyObject* outputs,
                                      PyObject* targets, TF_Status* status) {
  std::vector<TF_Output> feeds, fetches;
  std::vector<TF_Operation*> target_opers;
  if (!tensorweave::OutputsFromPython(inputs, &feeds) ||
      !tensorweave::OutputsFromPython(outputs, &fetches) ||
      !tensorweave::OperationsFromPython(targets, &target_opers)) {
    return nullptr;
  }
  const char* handle = nullptr;
  Py_BEGIN_ALLOW_THREADS;
  TF_SessionPRunSetup(session, feeds.data(), static_cast<int>(feeds.size()), fetches.data(),
                      static_cast<int>(fetches.size()), target_opers.data(),
                      static_cast<int>(target_opers.size()), &handle, status);
  Py_END_ALLOW_THREADS;
  if (TF_GetCode(status) != TF_OK) return nullptr;
  PyObject* result = PyUnicode_FromString(handle);
  TF_DeletePRunHandle(handle);
  return result;
}

PyObject* TW_SessionPRun_wrapper(TF_Session* session, const char* prun_handle, PyObject* inputs,
                                 PyObject* input_values, PyObject* outputs, TF_Status* status) {
  std::vector<TF_Output> feeds, fetches;
  if (!tensorweave::OutputsFromPython(inputs, &feeds) ||
      !tensorweave::OutputsFromPython(outputs, &fetches)) {
    return nullptr;
  }
  tensorweave::PyRef values(PySequence_Fast(input_values, "feed values must be a list"));
  if (!values) return nullptr;
  if (PySequence_Fast_GET_SIZE(values.get()) != static_cast<Py_ssize_t>(feeds.size())) {
    PyErr_SetString(PyExc_ValueError, "One feed value per feed is needed");
    return nullptr;
  }
  OwnedTensors in;
  for (size_t i = 0; i < feeds.size(); ++i) {
    in.tensors.push_back(tensorweave::NdarrayToTensor(PySequence_Fast_GET_ITEM(values.get(), i)));
    if (in.tensors.back() == nullptr) return nullptr;
  }
  OwnedTensors out;
  out.tensors.resize(fetches.size(), nullptr);
  Py_BEGIN_ALLOW_THREADS;
  TF_SessionPRun(session, prun_handle, feeds.data(), in.tensors.data(),
                 static_cast<int>(feeds.size()), fetches.data(), out.tensors.data(),
                 static_cast<int>(fetches.size()), nullptr, 0, status);
  Py_END_ALLOW_THREADS;
  if (TF_GetCode(status) != TF_OK) return nullptr;
  tensorweave::PyRef results(PyList_New(static_cast<Py_ssize_t>(fetches.size())));
  if (!results) return nullptr;
  for (size_t i = 0; i < fetches.size(); ++i) {
    TF_Tensor* tensor = out.tensors[i];
    out.tensors[i] = nullptr;  // TensorToNdarray owns it now, also on failure
    PyObject* value = tensorweave::TensorToNdarray(tensor);
    if (value == nullptr) return nullptr;
    PyList_SET_ITEM(results.get(), static_cast<Py_ssize_t>(i), value);
  }
  return results.release();
}
