#include "swig/tf_session_helper.h"

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "swig/ndarray_tensor.h"

namespace tensorweave {
namespace {

OperationFromPythonFn operation_from_python = nullptr;

struct BufferDeleter {
  void operator()(TF_Buffer* buffer) const { TF_DeleteBuffer(buffer); }
};

// Releases the GIL for the lifetime of the object.
class WithoutGil {
 public:
  WithoutGil() : state_(PyEval_SaveThread()) {}
  ~WithoutGil() { PyEval_RestoreThread(state_); }
  WithoutGil(const WithoutGil&) = delete;
  WithoutGil& operator=(const WithoutGil&) = delete;

 private:
  PyThreadState* state_;
};

// Feed tensors die with the run call; fetched ones are handed on one by one.
class TensorList {
 public:
  explicit TensorList(size_t size) : tensors_(size, nullptr) {}
  ~TensorList() {
    for (TF_Tensor* tensor : tensors_) TF_DeleteTensor(tensor);
  }
  TensorList(const TensorList&) = delete;
  TensorList& operator=(const TensorList&) = delete;
  TF_Tensor** data() { return tensors_.data(); }
  TF_Tensor*& operator[](size_t i) { return tensors_[i]; }
  TF_Tensor* release(size_t i) { return std::exchange(tensors_[i], nullptr); }

 private:
  std::vector<TF_Tensor*> tensors_;
};

// The error class for `code`, from tensorweave.framework.errors (looked up
// once; the function stays referenced for the life of the process).
PyObject* ErrorClassFor(TF_Code code) {
  static PyObject* lookup = nullptr;
  if (lookup == nullptr) {
    PyRef module(PyImport_ImportModule("tensorweave.framework.errors"));
    if (!module) return nullptr;
    lookup = PyObject_GetAttrString(module.get(), "exception_type_from_error_code");
    if (lookup == nullptr) return nullptr;
  }
  return PyObject_CallFunction(lookup, "i", static_cast<int>(code));
}

PyObject* BufferToBytes(const TF_Buffer* buffer) {
  return PyBytes_FromStringAndSize(static_cast<const char*>(buffer->data), buffer->length);
}

bool CheckList(PyObject* object, const char* what) {
  if (PyList_Check(object) || PyTuple_Check(object)) return true;
  PyErr_Format(PyExc_TypeError, "%s must be a list, got %s", what, Py_TYPE(object)->tp_name);
  return false;
}

}  // namespace

bool RaiseIfError(const TF_Status* status) {
  const TF_Code code = TF_GetCode(status);
  if (code == TF_OK) return true;
  const char* message = TF_Message(status);
  PyRef text(PyUnicode_DecodeUTF8(message, std::char_traits<char>::length(message), "replace"));
  if (!text) return false;
  PyRef error_class(ErrorClassFor(code));
  if (!error_class) {
    // The errors module itself is broken: still say what the runtime said.
    PyErr_Clear();
    PyErr_SetObject(PyExc_RuntimeError, text.get());
    return false;
  }
  PyRef error(
      PyObject_CallFunctionObjArgs(error_class.get(), Py_None, Py_None, text.get(), nullptr));
  if (error) PyErr_SetObject(error_class.get(), error.get());
  return false;
}

void SetOperationFromPython(OperationFromPythonFn convert) { operation_from_python = convert; }

bool OutputFromPython(PyObject* object, TF_Output* out) {
  if (!PyTuple_Check(object) || PyTuple_GET_SIZE(object) != 2) {
    PyErr_Format(PyExc_TypeError, "An output is an (operation, index) tuple, got %R", object);
    return false;
  }
  if (!operation_from_python(PyTuple_GET_ITEM(object, 0), &out->oper)) return false;
  const long index = PyLong_AsLong(PyTuple_GET_ITEM(object, 1));
  if (index == -1 && PyErr_Occurred()) return false;
  // The C API holds indices as int: a larger one must not wrap onto a real output.
  if (index < std::numeric_limits<int>::min() || index > std::numeric_limits<int>::max()) {
    PyErr_Format(PyExc_ValueError, "Output index %ld is out of range", index);
    return false;
  }
  out->index = static_cast<int>(index);
  return true;
}

bool OutputsFromPython(PyObject* list, std::vector<TF_Output>* out) {
  if (!CheckList(list, "outputs")) return false;
  PyRef items(PySequence_Fast(list, "outputs must be a list"));
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(items.get());
  out->resize(size);
  for (Py_ssize_t i = 0; i < size; ++i) {
    if (!OutputFromPython(PySequence_Fast_GET_ITEM(items.get(), i), &(*out)[i])) return false;
  }
  return true;
}

bool OperationsFromPython(PyObject* list, std::vector<TF_Operation*>* out) {
  if (!CheckList(list, "operations")) return false;
  PyRef items(PySequence_Fast(list, "operations must be a list"));
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(items.get());
  out->resize(size);
  for (Py_ssize_t i = 0; i < size; ++i) {
    if (!operation_from_python(PySequence_Fast_GET_ITEM(items.get(), i), &(*out)[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace tensorweave

using tensorweave::BufferDeleter;
using tensorweave::PyRef;

TF_Operation* TW_CreateOperation(TF_Graph* graph, const char* op_type, const char* name,
                                 PyObject* inputs, PyObject* control_inputs, const char* device,
                                 PyObject* attrs, TF_Status* status) {
  // Convert everything first: once TF_NewOperation is called, only
  // TF_FinishOperation may end the description.
  struct Input {
    bool is_list;
    std::vector<TF_Output> outputs;
  };
  if (!tensorweave::CheckList(inputs, "inputs") || !tensorweave::CheckList(attrs, "attrs")) {
    return nullptr;
  }
  PyRef input_items(PySequence_Fast(inputs, "inputs must be a list"));
  std::vector<Input> converted(PySequence_Fast_GET_SIZE(input_items.get()));
  for (size_t i = 0; i < converted.size(); ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(input_items.get(), i);
    converted[i].is_list = PyList_Check(item);
    if (converted[i].is_list) {
      if (!tensorweave::OutputsFromPython(item, &converted[i].outputs)) return nullptr;
    } else {
      converted[i].outputs.resize(1);
      if (!tensorweave::OutputFromPython(item, &converted[i].outputs[0])) return nullptr;
    }
  }
  std::vector<TF_Operation*> controls;
  if (!tensorweave::OperationsFromPython(control_inputs, &controls)) return nullptr;
  PyRef attr_items(PySequence_Fast(attrs, "attrs must be a list"));
  std::vector<std::pair<const char*, std::pair<char*, Py_ssize_t>>> attr_values;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(attr_items.get()); ++i) {
    PyObject* pair = PySequence_Fast_GET_ITEM(attr_items.get(), i);
    const char* attr_name;
    char* bytes;
    Py_ssize_t size;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
        !(attr_name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(pair, 0))) ||
        PyBytes_AsStringAndSize(PyTuple_GET_ITEM(pair, 1), &bytes, &size) < 0) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "attrs are (name, bytes) tuples");
      return nullptr;
    }
    attr_values.push_back({attr_name, {bytes, size}});
  }

  TF_OperationDescription* description = TF_NewOperation(graph, op_type, name);
  for (const Input& input : converted) {
    if (input.is_list) {
      TF_AddInputList(description, input.outputs.data(), input.outputs.size());
    } else {
      TF_AddInput(description, input.outputs[0]);
    }
  }
  for (TF_Operation* control : controls) TF_AddControlInput(description, control);
  if (device[0] != '\0') TF_SetDevice(description, device);
  for (const auto& [attr_name, value] : attr_values) {
    TF_SetAttrValueProto(description, attr_name, value.first, value.second, status);
    if (TF_GetCode(status) != TF_OK) break;  // the description must still be finished
  }
  if (TF_GetCode(status) != TF_OK) {
    // A failed attr setter leaves the attr unset, and finishing could still
    // add the node (with the attr's default). A NULL control input is a
    // malformed value the description records, so the finish below frees
    // it without adding anything; its own verdict does not replace ours.
    TF_AddControlInput(description, nullptr);
    tensorweave::StatusHolder ignored;
    TF_Operation* stray = TF_FinishOperation(description, ignored.get());
    (void)stray;
    return nullptr;
  }
  tensorweave::WithoutGil unlocked;
  return TF_FinishOperation(description, status);
}

PyObject* TW_GraphOperationNames(TF_Graph* graph) {
  PyRef names(PyList_New(0));
  if (!names) return nullptr;
  size_t position = 0;
  while (TF_Operation* oper = TF_GraphNextOperation(graph, &position)) {
    PyRef name(PyUnicode_FromString(TF_OperationName(oper)));
    if (!name || PyList_Append(names.get(), name.get()) < 0) return nullptr;
  }
  return names.release();
}

PyObject* TW_OperationInputs(TF_Operation* oper) {
  const int count = TF_OperationNumInputs(oper);
  PyRef inputs(PyList_New(count));
  if (!inputs) return nullptr;
  for (int i = 0; i < count; ++i) {
    const TF_Output source = TF_OperationInput(TF_Input{oper, i});
    PyObject* item = Py_BuildValue("(si)", TF_OperationName(source.oper), source.index);
    if (item == nullptr) return nullptr;
    PyList_SET_ITEM(inputs.get(), i, item);
  }
  return inputs.release();
}

PyObject* TW_OperationControlInputs(TF_Operation* oper) {
  std::vector<TF_Operation*> controls(TF_OperationNumControlInputs(oper));
  const int count = TF_OperationGetControlInputs(oper, controls.data(), controls.size());
  PyRef names(PyList_New(count));
  if (!names) return nullptr;
  for (int i = 0; i < count; ++i) {
    PyObject* name = PyUnicode_FromString(TF_OperationName(controls[i]));
    if (name == nullptr) return nullptr;
    PyList_SET_ITEM(names.get(), i, name);
  }
  return names.release();
}

PyObject* TW_OperationOutputTypes(TF_Operation* oper) {
  const int count = TF_OperationNumOutputs(oper);
  PyRef types(PyList_New(count));
  if (!types) return nullptr;
  for (int i = 0; i < count; ++i) {
    PyObject* type = PyLong_FromLong(TF_OperationOutputType(TF_Output{oper, i}));
    if (type == nullptr) return nullptr;
    PyList_SET_ITEM(types.get(), i, type);
  }
  return types.release();
}

PyObject* TW_GraphGetTensorShape(TF_Graph* graph, TF_Output output, TF_Status* status) {
  const int rank = TF_GraphGetTensorNumDims(graph, output, status);
  if (TF_GetCode(status) != TF_OK) return nullptr;
  if (rank < 0) Py_RETURN_NONE;
  std::vector<int64_t> dims(rank);
  TF_GraphGetTensorShape(graph, output, dims.data(), rank, status);
  if (TF_GetCode(status) != TF_OK) return nullptr;
  PyRef shape(PyList_New(rank));
  if (!shape) return nullptr;
  for (int i = 0; i < rank; ++i) {
    PyObject* size = PyLong_FromLongLong(dims[i]);
    if (size == nullptr) return nullptr;
    PyList_SET_ITEM(shape.get(), i, size);
  }
  return shape.release();
}

PyObject* TW_GraphToGraphDef(TF_Graph* graph, TF_Status* status) {
  std::unique_ptr<TF_Buffer, BufferDeleter> buffer(TF_NewBuffer());
  TF_GraphToGraphDef(graph, buffer.get(), status);
  if (TF_GetCode(status) != TF_OK) return nullptr;
  return tensorweave::BufferToBytes(buffer.get());
}

PyObject* TW_OperationToNodeDef(TF_Operation* oper, TF_Status* status) {
  std::unique_ptr<TF_Buffer, BufferDeleter> buffer(TF_NewBuffer());
  TF_OperationToNodeDef(oper, buffer.get(), status);
  if (TF_GetCode(status) != TF_OK) return nullptr;
  return tensorweave::BufferToBytes(buffer.get());
}

PyObject* TW_OperationGetAttrValueProto(TF_Operation* oper, const char* attr_name,
                                        TF_Status* status) {
  std::unique_ptr<TF_Buffer, BufferDeleter> buffer(TF_NewBuffer());
  TF_OperationGetAttrValueProto(oper, attr_name, buffer.get(), status);
  if (TF_GetCode(status) != TF_OK) return nullptr;
  return tensorweave::BufferToBytes(buffer.get());
}

void TW_SetAttrValueProto(TF_Graph* graph, TF_Operation* oper, const char* attr_name,
                          const void* proto, size_t proto_len, TF_Status* status) {
  std::unique_ptr<TF_Buffer, BufferDeleter> buffer(TF_NewBufferFromString(proto, proto_len));
  TF_SetAttr(graph, oper, attr_name, buffer.get(), status);
}

PyObject* TW_GetHandleShapeAndType(TF_Graph* graph, TF_Output output) {
  std::unique_ptr<TF_Buffer, BufferDeleter> buffer(TF_GetHandleShapeAndType(graph, output));
  return tensorweave::BufferToBytes(buffer.get());
}

void TW_GraphImportGraphDef(TF_Graph* graph, const void* proto, size_t proto_len,
                            const char* prefix, PyObject* input_map, PyObject* control_dependencies,
                            PyObject* return_outputs, TF_Status* status) {
  struct Mapping {
    std::string source;
    int index;
    TF_Output target;
  };
  if (!tensorweave::CheckList(input_map, "input_map")) return;
  PyRef entries(PySequence_Fast(input_map, "input_map must be a list"));
  std::vector<Mapping> mappings;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(entries.get()); ++i) {
    PyObject* entry = PySequence_Fast_GET_ITEM(entries.get(), i);
    const char* source;
    int index;
    PyObject* target;
    if (!PyArg_ParseTuple(entry, "siO", &source, &index, &target)) return;
    Mapping mapping{source, index, {}};
    if (!tensorweave::OutputFromPython(target, &mapping.target)) return;
    mappings.push_back(std::move(mapping));
  }
  std::vector<TF_Operation*> controls;
  if (!tensorweave::OperationsFromPython(control_dependencies, &controls)) return;
  if (!tensorweave::CheckList(return_outputs, "return_outputs")) return;
  PyRef returns(PySequence_Fast(return_outputs, "return_outputs must be a list"));
  std::vector<std::pair<std::string, int>> wanted;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(returns.get()); ++i) {
    const char* name;
    int index;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(returns.get(), i), "si", &name, &index)) return;
    wanted.emplace_back(name, index);
  }

  std::unique_ptr<TF_ImportGraphDefOptions, void (*)(TF_ImportGraphDefOptions*)> options(
      TF_NewImportGraphDefOptions(), TF_DeleteImportGraphDefOptions);
  TF_ImportGraphDefOptionsSetPrefix(options.get(), prefix);
  for (const Mapping& mapping : mappings) {
    TF_ImportGraphDefOptionsAddInputMapping(options.get(), mapping.source.c_str(), mapping.index,
                                            mapping.target);
  }
  for (TF_Operation* control : controls) {
    TF_ImportGraphDefOptionsAddControlDependency(options.get(), control);
  }
  for (const auto& [name, index] : wanted) {
    TF_ImportGraphDefOptionsAddReturnOutput(options.get(), name.c_str(), index);
  }
  std::vector<TF_Output> found(wanted.size());
  const TF_Buffer graph_def{proto, proto_len, nullptr};
  tensorweave::WithoutGil unlocked;
  TF_GraphImportGraphDefWithReturnOutputs(graph, &graph_def, options.get(), found.data(),
                                          static_cast<int>(found.size()), status);
}

TF_Session* TW_NewSession(TF_Graph* graph, const char* target, const void* proto, size_t proto_len,
                          TF_Status* status) {
  std::unique_ptr<TF_SessionOptions, void (*)(TF_SessionOptions*)> options(TF_NewSessionOptions(),
                                                                           TF_DeleteSessionOptions);
  TF_SetTarget(options.get(), target);
  if (proto_len > 0) {
    TF_SetConfig(options.get(), proto, proto_len, status);
    if (TF_GetCode(status) != TF_OK) return nullptr;
  }
  tensorweave::WithoutGil unlocked;
  return TF_NewSession(graph, options.get(), status);
}

PyObject* TW_SessionMakeCallable_wrapper(TF_Session* session, const void* proto, size_t proto_len,
                                         TF_Status* status) {
  const TF_Buffer options{proto, proto_len, nullptr};
  int64_t handle = 0;
  {
    tensorweave::WithoutGil unlocked;
    TW_SessionMakeCallable(session, &options, &handle, status);
  }
  if (TF_GetCode(status) != TF_OK) return nullptr;
  return PyLong_FromLongLong(handle);
}

// One run of callable `handle`; `run_metadata` (may be null) gets the
// serialized RunMetadata (TW_SessionRunCallableWithMetadata).
static PyObject* RunCallable(TF_Session* session, int64_t handle, PyObject* feed_values,
                             int num_fetches, TF_Buffer* run_metadata) {
  if (!tensorweave::CheckList(feed_values, "feed values")) return nullptr;
  if (num_fetches < 0) {
    PyErr_SetString(PyExc_ValueError, "num_fetches must not be negative");
    return nullptr;
  }
  PyRef values(PySequence_Fast(feed_values, "feed values must be a list"));
  const Py_ssize_t feed_count = PySequence_Fast_GET_SIZE(values.get());
  if (feed_count > std::numeric_limits<int>::max()) {
    PyErr_SetString(PyExc_ValueError, "Too many feed values");
    return nullptr;
  }
  tensorweave::TensorList inputs(feed_count);
  for (Py_ssize_t i = 0; i < feed_count; ++i) {
    inputs[i] = tensorweave::NdarrayToTensor(PySequence_Fast_GET_ITEM(values.get(), i));
    if (inputs[i] == nullptr) return nullptr;
  }
  tensorweave::TensorList outputs(num_fetches);
  tensorweave::StatusHolder status;
  {
    tensorweave::WithoutGil unlocked;
    TW_SessionRunCallableWithMetadata(session, handle, inputs.data(), static_cast<int>(feed_count),
                                      outputs.data(), num_fetches, run_metadata, status.get());
  }
  if (!tensorweave::RaiseIfError(status.get())) return nullptr;
  PyRef results(PyList_New(num_fetches));
  if (!results) return nullptr;
  for (int i = 0; i < num_fetches; ++i) {
    PyObject* value = tensorweave::TensorToNdarray(outputs.release(i));
    if (value == nullptr) return nullptr;
    PyList_SET_ITEM(results.get(), i, value);
  }
  return results.release();
}

PyObject* TW_SessionRunCallable_wrapper(TF_Session* session, int64_t handle, PyObject* feed_values,
                                        int num_fetches) {
  return RunCallable(session, handle, feed_values, num_fetches, nullptr);
}

PyObject* TW_SessionRunCallableWithMetadata_wrapper(TF_Session* session, int64_t handle,
                                                    PyObject* feed_values, int num_fetches) {
  std::unique_ptr<TF_Buffer, void (*)(TF_Buffer*)> metadata(TF_NewBuffer(), TF_DeleteBuffer);
  PyRef results(RunCallable(session, handle, feed_values, num_fetches, metadata.get()));
  if (!results) return nullptr;
  PyRef serialized(PyBytes_FromStringAndSize(static_cast<const char*>(metadata->data),
                                             static_cast<Py_ssize_t>(metadata->length)));
  if (!serialized) return nullptr;
  return PyTuple_Pack(2, results.get(), serialized.get());
}

PyObject* TW_GetSessionStats(TF_Session* session) {
  TW_SessionStats stats{};
  TW_SessionGetStats(session, &stats);
  return Py_BuildValue("(LLL)", static_cast<long long>(stats.runs),
                       static_cast<long long>(stats.executors_built),
                       static_cast<long long>(stats.cache_hits));
}

PyObject* TW_SessionListDevices(TF_Session* session, TF_Status* status) {
  TF_DeviceList* listed = nullptr;
  {
    tensorweave::WithoutGil unlocked;  // a remote session asks its master
    listed = TF_SessionListDevices(session, status);
  }
  std::unique_ptr<TF_DeviceList, void (*)(TF_DeviceList*)> devices(listed, TF_DeleteDeviceList);
  if (TF_GetCode(status) != TF_OK) return nullptr;
  const int count = TF_DeviceListCount(devices.get());
  PyRef result(PyList_New(count));
  if (!result) return nullptr;
  for (int i = 0; i < count; ++i) {
    const char* name = TF_DeviceListName(devices.get(), i, status);
    const char* type = TF_DeviceListType(devices.get(), i, status);
    const long long memory = TF_DeviceListMemoryBytes(devices.get(), i, status);
    const unsigned long long incarnation = TF_DeviceListIncarnation(devices.get(), i, status);
    if (TF_GetCode(status) != TF_OK) return nullptr;
    PyObject* item = Py_BuildValue("(ssLK)", name, type, memory, incarnation);
    if (item == nullptr) return nullptr;
    PyList_SET_ITEM(result.get(), i, item);
  }
  return result.release();
}

void TW_Reset(const char* target, const void* proto, size_t proto_len, PyObject* containers,
              TF_Status* status) {
  std::vector<std::string> names;
  PyRef items(PySequence_Fast(containers, "containers must be a list of strings"));
  if (!items) return;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items.get()); ++i) {
    const char* name = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(items.get(), i));
    if (name == nullptr) return;
    names.push_back(name);
  }
  std::vector<const char*> pointers;
  for (const std::string& name : names) pointers.push_back(name.c_str());
  std::unique_ptr<TF_SessionOptions, void (*)(TF_SessionOptions*)> options(TF_NewSessionOptions(),
                                                                           TF_DeleteSessionOptions);
  TF_SetTarget(options.get(), target);
  if (proto_len > 0) {
    TF_SetConfig(options.get(), proto, proto_len, status);
    if (TF_GetCode(status) != TF_OK) return;
  }
  tensorweave::WithoutGil unlocked;
  TF_Reset(options.get(), pointers.data(), static_cast<int>(pointers.size()), status);
}

void TW_SetStatusForTesting(int code, const char* message, TF_Status* status) {
  TF_SetStatus(status, static_cast<TF_Code>(code), message);
}
