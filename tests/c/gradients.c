/* Builds y = x * x + 3x with TF_NewOperation, adds dy/dx with
 * TF_AddGradients and runs it with TF_SessionRun (dy/dx = 2x + 3), then
 * adds the same gradients under a prefix of our own with
 * TF_AddGradientsWithPrefix, and checks two errors: a prefix already used
 * (TF_INVALID_ARGUMENT) and an x unreachable from y (TF_INVALID_ARGUMENT),
 * neither of which adds operations. */
#include <stdio.h>

#include "c_api/c_api.h"
#include "check.h"
#include "graph_build.h"

static int count_operations(TF_Graph* graph) {
  size_t pos = 0;
  int count = 0;
  while (TF_GraphNextOperation(graph, &pos) != NULL) ++count;
  return count;
}

/* Feeds `values` (4 of them) to x and checks the fetched gradient. */
static void run_gradient(TF_Session* session, TF_Output x, TF_Output grad, const float* values,
                         TF_Status* status, const char* what) {
  const int64_t dims[1] = {4};
  float want[4];
  int i;
  TF_Tensor* feed = floats(values, dims, 1);
  TF_Tensor* fetched = NULL;
  for (i = 0; i < 4; ++i) want[i] = 2.0f * values[i] + 3.0f;
  TF_SessionRun(session, NULL, &x, &feed, 1, &grad, &fetched, 1, NULL, 0, NULL, status);
  CHECK_OK(status, what);
  if (fetched != NULL) expect(fetched, want, 4, what);
  TF_DeleteTensor(feed);
}

int main(void) {
  TF_Status* status = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  const int64_t dims[1] = {4};
  const float three_value = 3.0f;
  TF_Operation* x = placeholder(graph, status, "x", dims, 1);
  TF_Operation* z = placeholder(graph, status, "z", dims, 1);
  TF_Operation* three = constant(graph, status, "three", &three_value, NULL, 0);
  TF_Operation* square = binary(graph, status, "Mul", "square", x, x);
  TF_Operation* scaled = binary(graph, status, "Mul", "scaled", three, x);
  TF_Operation* y = binary(graph, status, "AddV2", "y", square, scaled);
  TF_Output x_output = out(x), y_output = out(y), z_output = out(z);
  TF_Output grad, prefixed;

  TF_AddGradients(graph, &y_output, 1, &x_output, 1, NULL, status, &grad);
  CHECK_OK(status, "TF_AddGradients");
  CHECK(grad.oper != NULL && strcmp(TF_OperationName(grad.oper), "gradients/AddN") == 0,
        "gradient is %s", grad.oper == NULL ? "NULL" : TF_OperationName(grad.oper));

  TF_AddGradientsWithPrefix(graph, "derivative", &y_output, 1, &x_output, 1, NULL, status,
                            &prefixed);
  CHECK_OK(status, "TF_AddGradientsWithPrefix");
  CHECK(prefixed.oper != NULL &&
            strncmp(TF_OperationName(prefixed.oper), "derivative/", strlen("derivative/")) == 0,
        "prefixed gradient is %s",
        prefixed.oper == NULL ? "NULL" : TF_OperationName(prefixed.oper));

  /* Errors leave the graph as it was. */
  {
    const int before = count_operations(graph);
    TF_Output ignored;
    TF_AddGradientsWithPrefix(graph, "square", &y_output, 1, &x_output, 1, NULL, status, &ignored);
    CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT, "used prefix: %d %s", TF_GetCode(status),
          TF_Message(status));
    CHECK(strstr(TF_Message(status), "conflicts with existing node") != NULL, "message %s",
          TF_Message(status));
    TF_AddGradients(graph, &y_output, 1, &z_output, 1, NULL, status, &ignored);
    CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT, "unreachable x: %d %s", TF_GetCode(status),
          TF_Message(status));
    CHECK(strstr(TF_Message(status), "unreachable from the output node(s)") != NULL, "message %s",
          TF_Message(status));
    CHECK(count_operations(graph) == before, "a failed call added operations");
  }

  {
    const float values[4] = {-2.0f, 0.0f, 0.5f, 10.0f};
    TF_SessionOptions* options = TF_NewSessionOptions();
    TF_Session* session = TF_NewSession(graph, options, status);
    CHECK_OK(status, "TF_NewSession");
    TF_DeleteSessionOptions(options);
    run_gradient(session, x_output, grad, values, status, "gradients/AddN");
    run_gradient(session, x_output, prefixed, values, status, "derivative gradient");
    TF_CloseSession(session, status);
    CHECK_OK(status, "TF_CloseSession");
    TF_DeleteSession(session, status);
    CHECK_OK(status, "TF_DeleteSession");
  }
  TF_DeleteGraph(graph);
  TF_DeleteStatus(status);
  if (failures == 0) printf("gradients: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
