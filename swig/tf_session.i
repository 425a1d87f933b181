// The Python binding of the C API: generates tensorweave.pywrap_tensorweave
// (and _pywrap_tensorweave) at build time.
//
// Three rules keep it small:
//  - Python sees only what is whitelisted below (%ignoreall, then %unignore).
//  - Every conversion lives in swig/tf_session_helper.cc and
//    swig/ndarray_tensor.cc; the typemaps here only call into them.
//  - A TF_Status never reaches Python: each TF_Status* argument is created by
//    the wrapper and checked after the call, and a bad one is raised as the
//    matching tensorweave.errors.*Error by tensorweave::RaiseIfError.
// The friendly API (python/tensorweave) is pure Python over these calls.
%module(package="tensorweave") pywrap_tensorweave

%{
#include "c_api/c_api.h"
#include "swig/ndarray_tensor.h"
#include "swig/py_func_helper.h"
#include "swig/tf_session_helper.h"

// How the helper reads the TF_Operation* out of a SWIG pointer object.
static bool OperationFromPython(PyObject* object, TF_Operation** out) {
  if (SWIG_IsOK(SWIG_ConvertPtr(object, reinterpret_cast<void**>(out),
                                SWIGTYPE_p_TF_Operation, 0)) && *out != nullptr) {
    return true;
  }
  PyErr_Format(PyExc_TypeError, "Expected an operation, got %R", object);
  return false;
}
%}

%init %{
  if (!tensorweave::InitNumpy()) return NULL;
  tensorweave::SetOperationFromPython(OperationFromPython);
  // PyFunc kernels call back into Python through this (swig/py_func_helper.h).
  tensorweave::InstallPyFuncCallback();
%}

// No stdint.i: it would spell int64_t as `long long` in casts, which is not
// int64_t on LP64 Linux. The one int64_t passed by value, a callable handle,
// has its own typemap below.

// ---- Whitelist ---------------------------------------------------------------
%define %ignoreall %ignore ""; %enddef
%define %unignore %rename("%s") %enddef
%define %unignoreall %rename("%s") ""; %enddef

%ignoreall
%unignore TF_Version;
%unignore TF_NewGraph;
%unignore TF_DeleteGraph;
%unignore TF_GraphOperationByName;
%unignore TF_GraphSetTensorShape;
%unignore TF_OperationName;
%unignore TF_OperationOpType;
%unignore TF_OperationDevice;
%unignore TF_OperationNumOutputs;
%unignore TF_OperationOutputType;
%unignore TF_CloseSession;
%unignore TF_DeleteSession;
%unignore TW_CreateOperation;
%unignore TF_UpdateEdge;
%unignore TW_GraphOperationNames;
%unignore TW_OperationInputs;
%unignore TW_OperationControlInputs;
%unignore TW_OperationOutputTypes;
%unignore TW_GraphGetTensorShape;
%unignore TW_GraphToGraphDef;
%unignore TW_OperationToNodeDef;
%unignore TW_OperationGetAttrValueProto;
%unignore TW_SetAttrValueProto;
%unignore TF_ClearAttr;
%unignore TW_GetHandleShapeAndType;
%unignore TF_SetRequireShapeInferenceFns;
%unignore TW_GraphImportGraphDef;
%unignore TW_NewSession;
%unignore TW_SessionMakeCallable_wrapper;
%unignore TW_SessionRunCallable_wrapper;
%unignore TW_SessionReleaseCallable;
%unignore TW_GetSessionStats;
%unignore TW_SessionListDevices;
%unignore TW_SetStatusForTesting;

// ---- Typemaps ------------------------------------------------------------------

// Status: made here, checked after the call. A helper may also fail by
// setting a Python error itself (a conversion problem), so check that first.
%typemap(in, numinputs=0) TF_Status* status (tensorweave::StatusHolder holder) {
  $1 = holder.get();
}
%typemap(argout) TF_Status* status {
  if (PyErr_Occurred() || !tensorweave::RaiseIfError($1)) SWIG_fail;
}

// Helpers returning PyObject* return NULL on failure: with a Python error set,
// or with the error in their TF_Status, which the argout typemap (run after
// this one) raises.
%typemap(out) PyObject* {
  if ($1 == NULL && PyErr_Occurred()) SWIG_fail;
  $result = $1 ? $1 : SWIG_Py_Void();
}

// Handles and names the C API would dereference: None (SWIG's NULL) is a
// clean ValueError (TypeError for strings) here, never a NULL passed on.
%typemap(check) TF_Graph* graph {
  if ($1 == NULL) SWIG_exception_fail(SWIG_ValueError, "The graph has been deleted (got None)");
}
%typemap(check) TF_Session* session {
  if ($1 == NULL) SWIG_exception_fail(SWIG_ValueError, "The session has been deleted");
}
%typemap(check) TF_Operation* oper {
  if ($1 == NULL) SWIG_exception_fail(SWIG_ValueError, "Expected an operation, got None");
}
%typemap(check) const char* op_type, const char* name, const char* oper_name,
                const char* prefix, const char* target, const char* attr_name,
                const char* device, const char* message {
  if ($1 == NULL) SWIG_exception_fail(SWIG_TypeError, "Expected a string, got None");
}

// A callable handle: a Python int.
%typemap(in) int64_t handle {
  const long long value = PyLong_AsLongLong($input);
  if (value == -1 && PyErr_Occurred()) SWIG_fail;
  $1 = static_cast<int64_t>(value);
}

// A graph tensor is the Python tuple (operation, index).
%typemap(in) TF_Output {
  if (!tensorweave::OutputFromPython($input, &$1)) SWIG_fail;
}

// An operation's input is the Python tuple (operation, index), like an output.
%typemap(in) TF_Input {
  PyObject* oper_object = NULL;
  int index = 0;
  if (!PyTuple_Check($input) || !PyArg_ParseTuple($input, "Oi", &oper_object, &index)) {
    PyErr_Clear();
    SWIG_exception_fail(SWIG_TypeError, "An input is a tuple (operation, index)");
  }
  if (!OperationFromPython(oper_object, &$1.oper)) SWIG_fail;
  $1.index = index;
}

// Serialized protos: bytes (None or b"" for nothing).
%typemap(in) (const void* proto, size_t proto_len) {
  if ($input == Py_None) {
    $1 = NULL;
    $2 = 0;
  } else {
    char* data;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize($input, &data, &size) < 0) SWIG_fail;
    $1 = data;
    $2 = static_cast<size_t>(size);
  }
}

// A shape: a list of sizes (-1 unknown), or None for an unknown rank.
%typemap(in) (const int64_t* dims, const int num_dims) (std::vector<int64_t> sizes) {
  if ($input != Py_None) {
    PyObject* items = PySequence_Fast($input, "a shape is a list of sizes or None");
    if (items == NULL) SWIG_fail;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); ++i) {
      sizes.push_back(PyLong_AsLongLong(PySequence_Fast_GET_ITEM(items, i)));
    }
    Py_DECREF(items);
    if (PyErr_Occurred()) SWIG_fail;
  }
  $1 = sizes.data();
  $2 = $input == Py_None ? -1 : static_cast<int>(sizes.size());
}

// ---- Registered ops: TF_GetAllOpList returns the serialized OpList as bytes --
%unignore TF_GetAllOpList;
%typemap(out) TF_Buffer* TF_GetAllOpList {
  if ($1 == NULL) SWIG_exception_fail(SWIG_MemoryError, "Out of memory listing the ops");
  $result = PyBytes_FromStringAndSize(static_cast<const char*>($1->data), $1->length);
  TF_DeleteBuffer($1);
  if ($result == NULL) SWIG_fail;
}

// ---- The GIL is released around calls into the runtime ---------------------
// (the helpers release it themselves around their runtime calls)
%exception TF_CloseSession {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%exception TF_DeleteSession {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%exception TW_SessionReleaseCallable {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%exception TF_DeleteGraph {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}

// ---- Reading checkpoints (TF_CheckpointReader) ------------------------------
// Python's tf.train.NewCheckpointReader (python/tensorweave/train/
// checkpoint_utils.py) owns the reader and deletes it; shapes and tensors
// come through swig/checkpoint_reader_helper.cc.
%{
#include "swig/checkpoint_reader_helper.h"
%}
%unignore TF_NewCheckpointReader;
%unignore TF_DeleteCheckpointReader;
%unignore TF_CheckpointReaderSize;
%unignore TF_CheckpointReaderGetVariable;
%unignore TF_CheckpointReaderHasTensor;
%unignore TF_CheckpointReaderGetVariableDataType;
%unignore TW_CheckpointReaderGetVariableShape;
%unignore TW_CheckpointReaderGetTensor;
%typemap(check) TF_CheckpointReader* reader {
  if ($1 == NULL) SWIG_exception_fail(SWIG_ValueError, "The checkpoint reader has been closed");
}
%typemap(check) const char* filename {
  if ($1 == NULL) SWIG_exception_fail(SWIG_TypeError, "Expected a string, got None");
}
// Opening reads and checks the file's table.
%exception TF_NewCheckpointReader {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%include "swig/checkpoint_reader_helper.h"

// ---- Servers (tf.train.Server in python/tensorweave/train/server_lib.py) ---
// The Python Server owns the TF_Server and deletes it. Starting, stopping,
// joining and deleting may wait (Join until another thread stops the
// server), so they run without the GIL.
%unignore TF_NewServer;
%unignore TF_ServerStart;
%unignore TF_ServerStop;
%unignore TF_ServerJoin;
%unignore TF_ServerTarget;
%unignore TF_DeleteServer;
%unignore TW_Reset;
%typemap(check) TF_Server* server {
  if ($1 == NULL) SWIG_exception_fail(SWIG_ValueError, "The server has been deleted");
}
%typemap(in) PyObject* containers {
  $1 = $input;
}
%exception TF_ServerStart {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%exception TF_ServerStop {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%exception TF_ServerJoin {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%exception TF_DeleteServer {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}

// ---- Record files (issue 11 part 3: event files, tf.io.TFRecordWriter) ----
// python/tensorweave/summary/record_io.py owns the writers and readers and
// deletes them. A record read comes back as bytes; the end of the file is
// an OutOfRangeError.
%unignore TW_NewRecordWriter;
%unignore TW_RecordWriterWrite;
%unignore TW_RecordWriterFlush;
%unignore TW_RecordWriterClose;
%unignore TW_DeleteRecordWriter;
%unignore TW_NewRecordReader;
%unignore TW_RecordReaderReadNext;
%unignore TW_DeleteRecordReader;
%apply (const void* proto, size_t proto_len) { (const void* record, size_t record_len) };
%typemap(check) TW_RecordWriter* writer {
  if ($1 == NULL) SWIG_exception_fail(SWIG_ValueError, "The record writer has been closed");
}
%typemap(check) TW_RecordReader* reader {
  if ($1 == NULL) SWIG_exception_fail(SWIG_ValueError, "The record reader has been closed");
}
%typemap(out) TF_Buffer* TW_RecordReaderReadNext {
  if ($1 == NULL) {
    $result = SWIG_Py_Void();
  } else {
    $result = PyBytes_FromStringAndSize(static_cast<const char*>($1->data), $1->length);
    TF_DeleteBuffer($1);
    if ($result == NULL) SWIG_fail;
  }
}
%exception TW_RecordWriterFlush {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%exception TW_RecordWriterClose {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%exception TW_DeleteRecordWriter {
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}

// ---- py_func (python/tensorweave/ops/script_ops.py names its dispatcher) ----
// Runs take no GIL (TW_SessionRunCallable_wrapper releases it), so a PyFunc
// kernel on an inter-op thread can take it to call Python.
%unignore TW_SetPyFuncDispatcher;

// ---- Run metadata and partial runs (Session.run(run_metadata=...),
// Session.partial_run_setup/partial_run in python/tensorweave/client) ------
%unignore TW_SessionRunCallableWithMetadata_wrapper;
%{
#include "swig/partial_run_helper.h"
%}
%unignore TW_SessionPRunSetup_wrapper;
%unignore TW_SessionPRun_wrapper;
%include "swig/partial_run_helper.h"
// ---- end of run metadata and partial runs ----

%include "c_api/c_api.h"
%include "swig/tf_session_helper.h"
%include "swig/py_func_helper.h"

%unignoreall
