// Partial runs for Python (Session.partial_run_setup / partial_run in
// python/tensorweave/client/session.py) over TF_SessionPRunSetup and
// TF_SessionPRun. Tensors are (operation, index) tuples, as elsewhere in
// the binding; the GIL is released while the runtime works.
#ifndef TENSORWEAVE_SWIG_PARTIAL_RUN_HELPER_H_
#define TENSORWEAVE_SWIG_PARTIAL_RUN_HELPER_H_

#include <Python.h>

#include "c_api/c_api.h"

// Declares the feeds `inputs` and fetches `outputs` (lists of (op, index))
// and target operations `targets` (a list of ops) and returns the handle
// (str).
PyObject* TW_SessionPRunSetup_wrapper(TF_Session* session, PyObject* inputs, PyObject* outputs,
                                      PyObject* targets, TF_Status* status);

// Feeds `input_values` (ndarrays, one per (op, index) of `inputs`) and
// returns the values of `outputs` (a list of ndarrays).
PyObject* TW_SessionPRun_wrapper(TF_Session* session, const char* prun_handle, PyObject* inputs,
                                 PyObject* input_values, PyObject* outputs, TF_Status* status);

#endif  // TENSORWEAVE_SWIG_PARTIAL_RUN_HELPER_H_
