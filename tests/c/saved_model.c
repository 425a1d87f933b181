/* Serves a SavedModel TensorFlow wrote (tests/fixtures/tf_saved_model/builder,
 * see tests/fixtures/record_saved_model.py) as a C program does:
 * TF_LoadSessionFromSavedModel with the "serve" tags, then the operations of
 * its signature looked up by name and run. Checks the outputs TensorFlow
 * served from the same directory, that the main op ran after the restore,
 * and the errors for unknown tags and a non-empty graph. Run from tests/c.
 * Exits non-zero on any mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_api/c_api.h"
#include "check.h"

static const char* kExportDir = "../fixtures/tf_saved_model/builder";

static TF_Output output_named(TF_Graph* graph, const char* name) {
  TF_Output output;
  output.oper = TF_GraphOperationByName(graph, name);
  output.index = 0;
  CHECK(output.oper != NULL, "operation %s is not in the loaded graph", name);
  return output;
}

/* TF_LoadSessionFromSavedModel into `graph`; NULL (and the status set) on error. */
static TF_Session* load(TF_Graph* graph, const char* tag, TF_Buffer* meta_graph_def,
                        TF_Status* status) {
  const char* tags[1] = {tag};
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_Session* session = TF_LoadSessionFromSavedModel(options, NULL, kExportDir, tags, 1, graph,
                                                     meta_graph_def, status);
  TF_DeleteSessionOptions(options);
  return session;
}

static void serve(TF_Status* status) {
  TF_Graph* graph = TF_NewGraph();
  TF_Buffer* meta_graph_def = TF_NewBuffer();
  TF_Session* session = load(graph, "serve", meta_graph_def, status);
  CHECK_OK(status, "TF_LoadSessionFromSavedModel");
  if (session == NULL) {
    TF_DeleteBuffer(meta_graph_def);
    TF_DeleteGraph(graph);
    return;
  }
  CHECK(meta_graph_def->length > 0, "the MetaGraphDef buffer is empty");

  /* What TensorFlow served from this directory (expected.npz). */
  const float x[6] = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.25f};
  const float expected_y[4] = {16.5f, 21.0f, 2.5f, 0.75f};
  int64_t dims[2] = {2, 3};
  TF_Tensor* x_tensor = TF_AllocateTensor(TF_FLOAT, dims, 2, sizeof(x));
  memcpy(TF_TensorData(x_tensor), x, sizeof(x));
  TF_Output inputs[1] = {output_named(graph, "x")};
  TF_Output outputs[2] = {output_named(graph, "y"), output_named(graph, "loads")};
  TF_Tensor* values[2] = {NULL, NULL};
  TF_SessionRun(session, NULL, inputs, &x_tensor, 1, outputs, values, 2, NULL, 0, NULL, status);
  CHECK_OK(status, "TF_SessionRun");
  if (values[0] != NULL) {
    CHECK(TF_NumDims(values[0]) == 2 && TF_Dim(values[0], 0) == 2 && TF_Dim(values[0], 1) == 2,
          "y has the wrong shape");
    const float* y = (const float*)TF_TensorData(values[0]);
    for (int i = 0; i < 4; ++i) {
      CHECK(fabsf(y[i] - expected_y[i]) < 1e-5f, "y[%d] = %g, TensorFlow served %g", i, y[i],
            expected_y[i]);
    }
    TF_DeleteTensor(values[0]);
  }
  if (values[1] != NULL) {
    /* Saved as 41; the main op adds one after the restore. */
    int64_t loads = *(const int64_t*)TF_TensorData(values[1]);
    CHECK(loads == 42, "loads = %lld, expected 42", (long long)loads);
    TF_DeleteTensor(values[1]);
  }
  TF_DeleteTensor(x_tensor);

  TF_DeleteSession(session, status);
  CHECK_OK(status, "TF_DeleteSession");
  TF_DeleteBuffer(meta_graph_def);
  TF_DeleteGraph(graph);
}

static void errors(TF_Status* status) {
  TF_Graph* graph = TF_NewGraph();
  TF_Session* session = load(graph, "no-such-tag", NULL, status);
  CHECK(session == NULL && TF_GetCode(status) == TF_NOT_FOUND,
        "unknown tags: code %d (%s), expected TF_NOT_FOUND", TF_GetCode(status),
        TF_Message(status));
  session = load(graph, "serve", NULL, status);
  CHECK_OK(status, "TF_LoadSessionFromSavedModel");
  /* The graph now holds the model: a second load into it is refused. */
  TF_Session* again = load(graph, "serve", NULL, status);
  CHECK(again == NULL && TF_GetCode(status) == TF_INVALID_ARGUMENT,
        "non-empty graph: code %d (%s), expected TF_INVALID_ARGUMENT", TF_GetCode(status),
        TF_Message(status));
  if (session != NULL) TF_DeleteSession(session, status);
  TF_DeleteGraph(graph);
}

int main(void) {
  TF_Status* status = TF_NewStatus();
  serve(status);
  errors(status);
  TF_DeleteStatus(status);
  if (failures == 0) printf("saved_model: OK\n");
  return failures == 0 ? 0 : 1;
}
