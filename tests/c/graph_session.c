/* Builds a graph with TF_NewOperation (placeholder, constants, MatMul, Mul,
 * AddV2, a variable with Assign/AssignAdd) and runs it with TF_SessionRun:
 * values, targets, extension after a run, errors, and a clean teardown.
 * Exits non-zero on any mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_api/c_api.h"
#include "check.h"
#include "graph_build.h"

int main(void) {
  static const int64_t any_by_2[2] = {-1, 2};
  static const int64_t two_by_2[2] = {2, 2};
  static const int64_t pair[1] = {2};
  static const float weights[4] = {1, 2, 3, 4};
  static const float bias[2] = {0.5f, -0.5f};
  static const float inputs[4] = {1, 0, 0, 1}; /* the identity: product = weights */
  static const float start[2] = {1, 2};
  static const float step[2] = {10, 20};
  const float scalar_two = 2, scalar_one = 1;
  TF_Status* status = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_Session* session;
  TF_Operation *x, *w, *product, *twice, *y, *variable, *init, *increment, *read, *z;
  TF_OperationDescription* desc;
  TF_Tensor* feed;
  TF_Tensor* fetched[2];
  TF_Output feeds[1], fetches[2];
  TW_SessionStats stats;
  TF_Buffer* graph_def;

  /* y = (x @ w) * 2 + bias */
  x = placeholder(graph, status, "x", any_by_2, 2);
  w = constant(graph, status, "w", weights, two_by_2, 2);
  desc = TF_NewOperation(graph, "MatMul", "product");
  TF_AddInput(desc, out(x));
  TF_AddInput(desc, out(w));
  TF_SetAttrBool(desc, "transpose_b", 0);
  product = finish(desc, status, "product");
  twice = binary(graph, status, "Mul", "twice", product,
                 constant(graph, status, "two", &scalar_two, NULL, 0));
  y = binary(graph, status, "AddV2", "y", twice, constant(graph, status, "bias", bias, pair, 1));
  {
    int64_t dims[2] = {0, 0};
    TF_GraphGetTensorShape(graph, out(y), dims, 2, status);
    CHECK_OK(status, "shape of y");
    CHECK(dims[0] == -1 && dims[1] == 2, "shape of y is [%lld,%lld], want [-1,2]",
          (long long)dims[0], (long long)dims[1]);
  }

  /* A variable: init sets it, increment adds to it, read fetches it. */
  desc = TF_NewOperation(graph, "VariableV2", "v");
  TF_SetAttrType(desc, "dtype", TF_FLOAT);
  TF_SetAttrShape(desc, "shape", pair, 1);
  variable = finish(desc, status, "v");
  init = binary(graph, status, "Assign", "init", variable,
                constant(graph, status, "start", start, pair, 1));
  increment = binary(graph, status, "AssignAdd", "increment", variable,
                     constant(graph, status, "step", step, pair, 1));
  desc = TF_NewOperation(graph, "Identity", "read");
  TF_AddInput(desc, out(variable));
  TF_AddControlInput(desc, increment);
  read = finish(desc, status, "read");
  if (failures > 0) return 1;

  session = TF_NewSession(graph, options, status);
  CHECK_OK(status, "new session");
  TF_DeleteSessionOptions(options);

  /* Run y twice with the same signature: the second reuses the executor. */
  feed = floats(inputs, two_by_2, 2);
  feeds[0] = out(x);
  fetches[0] = out(y);
  {
    const float want[4] = {2.5f, 3.5f, 6.5f, 7.5f};
    int run;
    for (run = 0; run < 2; ++run) {
      TF_SessionRun(session, NULL, feeds, &feed, 1, fetches, fetched, 1, NULL, 0, NULL, status);
      CHECK_OK(status, "run y");
      expect(fetched[0], want, 4, "y");
    }
    TW_SessionGetStats(session, &stats);
    CHECK(stats.runs == 2 && stats.executors_built == 1 && stats.cache_hits == 1,
          "stats runs=%lld built=%lld hits=%lld", (long long)stats.runs,
          (long long)stats.executors_built, (long long)stats.cache_hits);
  }

  /* Extend after a run: z is added to the graph now and sent with the next
   * run. */
  z = binary(graph, status, "Sub", "z", y, constant(graph, status, "one", &scalar_one, NULL, 0));
  fetches[0] = out(z);
  fetches[1] = out(y);
  TF_SessionRun(session, NULL, feeds, &feed, 1, fetches, fetched, 2, NULL, 0, NULL, status);
  CHECK_OK(status, "run z after extension");
  {
    const float want_z[4] = {1.5f, 2.5f, 5.5f, 6.5f};
    const float want_y[4] = {2.5f, 3.5f, 6.5f, 7.5f};
    expect(fetched[0], want_z, 4, "z");
    expect(fetched[1], want_y, 4, "y with z");
  }

  /* The variable: init as a target, then each read runs the increment. */
  TF_SessionRun(session, NULL, NULL, NULL, 0, NULL, NULL, 0, (const TF_Operation* const*)&init, 1,
                NULL, status);
  CHECK_OK(status, "run init");
  fetches[0] = out(read);
  {
    const float after_one[2] = {11, 22};
    const float after_two[2] = {21, 42};
    TF_SessionRun(session, NULL, NULL, NULL, 0, fetches, fetched, 1, NULL, 0, NULL, status);
    CHECK_OK(status, "read 1");
    expect(fetched[0], after_one, 2, "v after one increment");
    TF_SessionRun(session, NULL, NULL, NULL, 0, fetches, fetched, 1, NULL, 0, NULL, status);
    CHECK_OK(status, "read 2");
    expect(fetched[0], after_two, 2, "v after two increments");
  }

  /* Failures: nothing to fetch, and an unfed placeholder. Outputs are NULL. */
  TF_SessionRun(session, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, NULL, status);
  CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT, "empty run gave %d", TF_GetCode(status));
  fetches[0] = out(y);
  fetched[0] = feed; /* must be overwritten with NULL */
  TF_SessionRun(session, NULL, NULL, NULL, 0, fetches, fetched, 1, NULL, 0, NULL, status);
  CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT, "unfed x gave %d", TF_GetCode(status));
  CHECK(strstr(TF_Message(status), "x") != NULL, "message should name x: %s", TF_Message(status));
  CHECK(fetched[0] == NULL, "outputs must be NULL after a failure");

  /* The graph serializes with every operation. */
  graph_def = TF_NewBuffer();
  TF_GraphToGraphDef(graph, graph_def, status);
  CHECK_OK(status, "graph to GraphDef");
  CHECK(graph_def->length > 0, "empty GraphDef");
  TF_DeleteBuffer(graph_def);

  /* Close: later runs fail. Delete the graph first: the session keeps it. */
  TF_CloseSession(session, status);
  CHECK_OK(status, "close");
  TF_SessionRun(session, NULL, feeds, &feed, 1, fetches, fetched, 1, NULL, 0, NULL, status);
  CHECK(TF_GetCode(status) == TF_CANCELLED, "run after close gave %d", TF_GetCode(status));
  TF_DeleteGraph(graph);
  TF_DeleteSession(session, status);
  CHECK_OK(status, "delete session");
  TF_DeleteTensor(feed);
  TF_DeleteStatus(status);

  if (failures > 0) {
    fprintf(stderr, "graph_session: %d check(s) failed\n", failures);
    return 1;
  }
  printf("graph_session: all checks passed\n");
  return 0;
}
