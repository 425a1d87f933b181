// Conversion code behind the SWIG binding (swig/tf_session.i): numpy arrays
// ⇄ TF_Tensors, Python lists ⇄ C API arrays, and TF_Status → the matching
// tensorweave.errors exception. The .i file only whitelists and forwards;
// every conversion lives here.
//
// Error rule for every TW_* entry point: a failure is reported either as a
// Python exception already set (conversion problems) or in the TF_Status
// argument (runtime errors); the binding checks both after each call and
// raises through RaiseIfError, the one place a status becomes an exception.
#ifndef TENSORWEAVE_SWIG_TF_SESSION_HELPER_H_
#define TENSORWEAVE_SWIG_TF_SESSION_HELPER_H_

#include <Python.h>

#include <vector>

#include "c_api/c_api.h"

#ifndef SWIG
namespace tensorweave {

// When `status` holds an error, sets the Python exception of the matching
// tensorweave.errors class (looked up through
// tensorweave.framework.errors.exception_type_from_error_code) and returns
// false. Returns true for TF_OK.
bool RaiseIfError(const TF_Status* status);

// The binding registers how to read the TF_Operation* out of the Python
// object SWIG wraps it in, so conversions can live here.
using OperationFromPythonFn = bool (*)(PyObject* object, TF_Operation** out);
void SetOperationFromPython(OperationFromPythonFn convert);

// Python (op, index) → TF_Output; lists of those; lists of ops. False with a
// Python TypeError set when the object has the wrong shape.
bool OutputFromPython(PyObject* object, TF_Output* out);
bool OutputsFromPython(PyObject* list, std::vector<TF_Output>* out);
bool OperationsFromPython(PyObject* list, std::vector<TF_Operation*>* out);

// A TF_Status owned by the wrapper function that declares it.
class StatusHolder {
 public:
  StatusHolder() : status_(TF_NewStatus()) {}
  ~StatusHolder() { TF_DeleteStatus(status_); }
  StatusHolder(const StatusHolder&) = delete;
  StatusHolder& operator=(const StatusHolder&) = delete;
  TF_Status* get() const { return status_; }

 private:
  TF_Status* status_;
};

}  // namespace tensorweave
#endif  // SWIG

// ---- Entry points whitelisted for Python (see tf_session.i) ----------------

// Builds and finishes one operation in a single call, so a Python error can
// never leave a half-built TF_OperationDescription behind.
//   inputs          list; an (op, index) tuple per single input, a list of
//                   such tuples per list input (e.g. AddN's)
//   control_inputs  list of operations
//   device          "" for none
//   attrs           list of (name, serialized AttrValue bytes)
// Returns the new operation (owned by the graph). The GIL is released while
// the C API checks the op and infers its shapes.
TF_Operation* TW_CreateOperation(TF_Graph* graph, const char* op_type, const char* name,
                                 PyObject* inputs, PyObject* control_inputs, const char* device,
                                 PyObject* attrs, TF_Status* status);

// The names of every operation of `graph`, in the order they were added.
PyObject* TW_GraphOperationNames(TF_Graph* graph);
// [(input operation name, output index)] for each data input of `oper`.
PyObject* TW_OperationInputs(TF_Operation* oper);
// The names of the control inputs of `oper`.
PyObject* TW_OperationControlInputs(TF_Operation* oper);
// [TF_DataType as int] of each output of `oper`: one call where a new
// Operation wrapper would otherwise make one per output.
PyObject* TW_OperationOutputTypes(TF_Operation* oper);
// The inferred shape of `output`: a list (-1 for unknown sizes) or None for
// an unknown rank.
PyObject* TW_GraphGetTensorShape(TF_Graph* graph, TF_Output output, TF_Status* status);
// Serialized protos as bytes.
PyObject* TW_GraphToGraphDef(TF_Graph* graph, TF_Status* status);
PyObject* TW_OperationToNodeDef(TF_Operation* oper, TF_Status* status);
PyObject* TW_OperationGetAttrValueProto(TF_Operation* oper, const char* attr_name,
                                        TF_Status* status);
// TF_SetAttr with the AttrValue as bytes (Operation._set_attr).
void TW_SetAttrValueProto(TF_Graph* graph, TF_Operation* oper, const char* attr_name,
                          const void* proto, size_t proto_len, TF_Status* status);
// TF_GetHandleShapeAndType's serialized HandleData as bytes (b"" when unknown).
PyObject* TW_GetHandleShapeAndType(TF_Graph* graph, TF_Output output);

// Imports a serialized GraphDef (`proto`) under `prefix` ("" for none).
//   input_map             list of (source name, source index, (op, index))
//   control_dependencies  list of operations every imported op runs after
//   return_outputs        list of (name, index) of the GraphDef that must
//                         exist, checked before anything is added
// The GIL is released during the import.
void TW_GraphImportGraphDef(TF_Graph* graph, const void* proto, size_t proto_len,
                            const char* prefix, PyObject* input_map, PyObject* control_dependencies,
                            PyObject* return_outputs, TF_Status* status);

// A session on `graph` with `target` and a serialized ConfigProto (`proto`,
// may be empty). The GIL is released while the session starts.
TF_Session* TW_NewSession(TF_Graph* graph, const char* target, const void* proto, size_t proto_len,
                          TF_Status* status);

// Prepares a step from a serialized CallableOptions (`proto`) and returns
// its handle (TW_SessionMakeCallable) as an int. The GIL is released while
// the session extends its graph and compiles the step.
PyObject* TW_SessionMakeCallable_wrapper(TF_Session* session, const void* proto, size_t proto_len,
                                         TF_Status* status);

// Runs callable `handle` once (TW_SessionRunCallable): feeds `feed_values`
// (one numpy array per CallableOptions.feed, of the feed's dtype;
// C-contiguous aligned arrays are wrapped without a copy) and returns a list
// of `num_fetches` values: ndarrays that own the fetched tensors' memory
// without a copy (a numpy scalar for a 0-d result, bytes objects for
// strings). The GIL is released while the step runs.
PyObject* TW_SessionRunCallable_wrapper(TF_Session* session, int64_t handle, PyObject* feed_values,
                                        int num_fetches);

// As TW_SessionRunCallable_wrapper, returning (values, metadata): metadata
// is the serialized RunMetadata of the run
// (TW_SessionRunCallableWithMetadata). A failed run raises, and its
// metadata is dropped.
PyObject* TW_SessionRunCallableWithMetadata_wrapper(TF_Session* session, int64_t handle,
                                                    PyObject* feed_values, int num_fetches);

// (runs, executors_built, cache_hits) of `session`.
PyObject* TW_GetSessionStats(TF_Session* session);

// [(name, device_type, memory_limit_bytes)] for each device of `session`.
PyObject* TW_SessionListDevices(TF_Session* session, TF_Status* status);

// TF_Reset for `target` with a serialized ConfigProto (`proto`, may be
// empty) and `containers`, a sequence of str. The GIL is released while the
// containers are cleared (a remote target is an RPC).
void TW_Reset(const char* target, const void* proto, size_t proto_len, PyObject* containers,
              TF_Status* status);

// Fills `status` with `code` and `message`, so tests can check that every
// code reaches Python as its tensorweave.errors class.
void TW_SetStatusForTesting(int code, const char* message, TF_Status* status);

#endif  // TENSORWEAVE_SWIG_TF_SESSION_HELPER_H_
