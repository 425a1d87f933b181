/* Builds TensorFlow 1.x while loops with TF_NewWhile / TF_FinishWhile and runs
 * them with TF_SessionRun:
 *   x = start; while x < 100: x = double_it(x)
 * where double_it is a function made with TF_GraphToFunction and copied into
 * the body graph (so the loop's operations call it by name), then a loop
 * whose condition output is not a bool (an error that leaves the graph as it
 * was) and one given up with TF_AbortWhile. */
#include "c_api/c_api.h"
#include "check.h"
#include "graph_build.h"

/* double_it(x) = x * 2, as a function. */
static TF_Function* make_double_it(TF_Status* status) {
  TF_Graph* body = TF_NewGraph();
  const float two_value = 2.0f;
  TF_Operation* x = placeholder(body, status, "x", NULL, -1);
  TF_Operation* two = constant(body, status, "two", &two_value, NULL, 0);
  TF_Operation* doubled = binary(body, status, "Mul", "doubled", x, two);
  TF_Output input = out(x), output = out(doubled);
  TF_Function* func = TF_GraphToFunction(body, "double_it", 0, -1, NULL, 1, &input, 1, &output,
                                         NULL, NULL, "x * 2", status);
  CHECK_OK(status, "TF_GraphToFunction");
  TF_DeleteGraph(body); /* the function holds its own copy */
  return func;
}

static int count_operations(TF_Graph* graph) {
  size_t pos = 0;
  int count = 0;
  while (TF_GraphNextOperation(graph, &pos) != NULL) ++count;
  return count;
}

/* Runs the loop from `start_value` and checks it ends at `want`. */
static void run_loop(TF_Session* session, TF_Output start, TF_Output result, float start_value,
                     float want, TF_Status* status) {
  TF_Tensor* feed = floats(&start_value, NULL, 0);
  TF_Tensor* fetched = NULL;
  TF_SessionRun(session, NULL, &start, &feed, 1, &result, &fetched, 1, NULL, 0, NULL, status);
  CHECK_OK(status, "TF_SessionRun");
  if (fetched != NULL) expect(fetched, &want, 1, "loop result");
  TF_DeleteTensor(feed);
}

int main(void) {
  TF_Status* status = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  TF_Function* double_it = make_double_it(status);
  CHECK(strcmp(TF_FunctionName(double_it), "double_it") == 0, "name %s",
        TF_FunctionName(double_it));

  TF_Operation* start = placeholder(graph, status, "start", NULL, 0);
  TF_Output start_output = out(start);
  TF_Output result;
  TF_WhileParams params = TF_NewWhile(graph, &start_output, 1, status);
  CHECK_OK(status, "TF_NewWhile");
  {
    const float limit_value = 100.0f;
    TF_Operation* limit = constant(params.cond_graph, status, "limit", &limit_value, NULL, 0);
    TF_OperationDescription* desc = TF_NewOperation(params.cond_graph, "Less", "less");
    TF_OperationDescription* call;
    TF_AddInput(desc, params.cond_inputs[0]);
    TF_AddInput(desc, out(limit));
    params.cond_output = out(finish(desc, status, "less"));

    TF_GraphCopyFunction(params.body_graph, double_it, NULL, status);
    CHECK_OK(status, "TF_GraphCopyFunction");
    call = TF_NewOperation(params.body_graph, "double_it", "call");
    TF_AddInput(call, params.body_inputs[0]);
    params.body_outputs[0] = out(finish(call, status, "call"));
  }
  params.name = "doubling";
  TF_FinishWhile(&params, status, &result);
  CHECK_OK(status, "TF_FinishWhile");
  CHECK(strcmp(TF_OperationName(result.oper), "doubling/Exit") == 0, "exit %s",
        TF_OperationName(result.oper));
  CHECK(TF_GraphOperationByName(graph, "doubling/body/call") != NULL, "no body call");
  CHECK(TF_GraphNumFunctions(graph) == 1, "%d functions", TF_GraphNumFunctions(graph));

  /* A condition that is not a bool: an error, and nothing is added. */
  {
    const int before = count_operations(graph);
    TF_Output ignored;
    TF_WhileParams bad = TF_NewWhile(graph, &start_output, 1, status);
    CHECK_OK(status, "TF_NewWhile (bad)");
    bad.cond_output = bad.cond_inputs[0];
    bad.body_outputs[0] = bad.body_inputs[0];
    TF_FinishWhile(&bad, status, &ignored);
    CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT, "float condition: %d %s", TF_GetCode(status),
          TF_Message(status));
    CHECK(count_operations(graph) == before, "the failed loop added operations");
  }
  /* A loop given up. */
  {
    TF_WhileParams abandoned = TF_NewWhile(graph, &start_output, 1, status);
    CHECK_OK(status, "TF_NewWhile (abandoned)");
    TF_AbortWhile(&abandoned);
  }

  {
    TF_SessionOptions* options = TF_NewSessionOptions();
    TF_Session* session = TF_NewSession(graph, options, status);
    CHECK_OK(status, "TF_NewSession");
    TF_DeleteSessionOptions(options);
    run_loop(session, start_output, result, 1.0f, 128.0f, status);
    run_loop(session, start_output, result, 3.0f, 192.0f, status);
    run_loop(session, start_output, result, 500.0f, 500.0f, status);
    TF_CloseSession(session, status);
    CHECK_OK(status, "TF_CloseSession");
    TF_DeleteSession(session, status);
    CHECK_OK(status, "TF_DeleteSession");
  }
  TF_DeleteFunction(double_it);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(status);
  if (failures == 0) printf("while_loop: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
