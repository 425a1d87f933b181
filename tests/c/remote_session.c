/* Starts a tensorweave server inside this process with TF_NewServer (a
 * one-task cluster on a free loopback port), then runs a graph on it
 * through TF_SetTarget("grpc://...") and the usual TF_SessionRun: values,
 * a variable updated across runs, an error from the remote side, and a
 * clean teardown (TF_ServerStop, TF_DeleteServer). The checks run twice:
 * with the server's master called directly (a session of the server's own
 * process, the default) and over gRPC (ConfigProto.rpc_options.
 * use_rpc_for_inprocess_master). Exits non-zero on any mismatch. */
#include <stdio.h>
#include <string.h>

#include "c_api/c_api.h"
#include "check.h"
#include "graph_build.h"

/* ServerDef { cluster { job { name: "localhost" tasks { key: 0 value:
 * "localhost:0" } } } job_name: "localhost" task_index: 0 protocol: "grpc" },
 * serialized (port 0: the server picks a free one). */
static const unsigned char kServerDef[] = {
    0x0a, 0x1e, 0x0a, 0x1c, 0x0a, 0x09, 0x6c, 0x6f, 0x63, 0x61, 0x6c, 0x68, 0x6f,
    0x73, 0x74, 0x12, 0x0f, 0x08, 0x00, 0x12, 0x0b, 0x6c, 0x6f, 0x63, 0x61, 0x6c,
    0x68, 0x6f, 0x73, 0x74, 0x3a, 0x30, 0x12, 0x09, 0x6c, 0x6f, 0x63, 0x61, 0x6c,
    0x68, 0x6f, 0x73, 0x74, 0x2a, 0x04, 0x67, 0x72, 0x70, 0x63};

/* ConfigProto { rpc_options { use_rpc_for_inprocess_master: true } }. */
static const unsigned char kUseRpcConfig[] = {0x6a, 0x02, 0x08, 0x01};

static const int64_t one_by_4[2] = {1, 4};

/* The graph's operations the checks use. */
struct Ops {
  TF_Operation *x, *y, *init, *increment;
};

/* One session on `target` (with `config` when not NULL): every check. */
static void run_checks(TF_Graph* graph, struct Ops ops, const char* target,
                       const unsigned char* config, size_t config_size, const char* how) {
  static const float inputs[4] = {1, 2, 3, 4};
  static const float expected_y[4] = {3, 5, 7, 9};
  TF_Status* status = TF_NewStatus();
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_Session* session;
  TF_Tensor* feed;
  TF_Tensor* fetched[1];
  TF_Output feeds[1], fetches[1];
  const TF_Operation* targets[1];
  float counter;
  int i;

  printf("remote_session: %s\n", how);
  TF_SetTarget(options, target);
  if (config != NULL) {
    TF_SetConfig(options, config, config_size, status);
    CHECK_OK(status, "TF_SetConfig");
  }
  session = TF_NewSession(graph, options, status);
  CHECK_OK(status, "TF_NewSession with a grpc target");

  feeds[0] = out(ops.x);
  fetches[0] = out(ops.y);
  feed = floats(inputs, one_by_4, 2);
  TF_SessionRun(session, NULL, feeds, &feed, 1, fetches, fetched, 1, NULL, 0, NULL, status);
  CHECK_OK(status, "run y");
  if (TF_GetCode(status) == TF_OK) expect(fetched[0], expected_y, 4, "y");

  /* Fetching y without feeding x is the remote side's INVALID_ARGUMENT. */
  TF_SessionRun(session, NULL, NULL, NULL, 0, fetches, fetched, 1, NULL, 0, NULL, status);
  CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT, "unfed placeholder: code %d (%s)",
        TF_GetCode(status), TF_Message(status));

  /* The variable keeps its value across runs on the server. */
  targets[0] = ops.init;
  TF_SessionRun(session, NULL, NULL, NULL, 0, NULL, NULL, 0, targets, 1, NULL, status);
  CHECK_OK(status, "init");
  for (i = 0; i < 3; ++i) {
    fetches[0] = out(ops.increment);
    TF_SessionRun(session, NULL, NULL, NULL, 0, fetches, fetched, 1, NULL, 0, NULL, status);
    CHECK_OK(status, "increment");
    if (TF_GetCode(status) == TF_OK) {
      counter = (float)(i + 1);
      expect(fetched[0], &counter, 1, "counter");
    }
  }

  TF_DeleteTensor(feed);
  TF_CloseSession(session, status);
  CHECK_OK(status, "close");
  TF_DeleteSession(session, status);
  CHECK_OK(status, "delete session");
  TF_DeleteSessionOptions(options);
  TF_DeleteStatus(status);
}

int main(void) {
  const float scalar_two = 2, scalar_one = 1, zero = 0;
  TF_Status* status = TF_NewStatus();
  TF_Server* server;
  const char* target;
  TF_Graph* graph = TF_NewGraph();
  TF_Operation* variable;
  TF_OperationDescription* desc;
  struct Ops ops;

  server = TF_NewServer(kServerDef, sizeof(kServerDef), status);
  CHECK_OK(status, "TF_NewServer");
  if (server == NULL) return 1;
  TF_ServerStart(server, status);
  CHECK_OK(status, "TF_ServerStart");
  target = TF_ServerTarget(server);
  CHECK(strncmp(target, "grpc://localhost:", 17) == 0, "target %s", target);

  /* y = x * 2 + 1, and a counter variable. */
  ops.x = placeholder(graph, status, "x", one_by_4, 2);
  ops.y = binary(graph, status, "AddV2", "y",
                 binary(graph, status, "Mul", "twice", ops.x,
                        constant(graph, status, "two", &scalar_two, NULL, 0)),
                 constant(graph, status, "one", &scalar_one, NULL, 0));
  desc = TF_NewOperation(graph, "VariableV2", "counter");
  TF_SetAttrType(desc, "dtype", TF_FLOAT);
  TF_SetAttrShape(desc, "shape", NULL, 0);
  variable = finish(desc, status, "counter");
  ops.init = binary(graph, status, "Assign", "init", variable,
                    constant(graph, status, "zero", &zero, NULL, 0));
  ops.increment = binary(graph, status, "AssignAdd", "increment", variable,
                         constant(graph, status, "step", &scalar_one, NULL, 0));

  run_checks(graph, ops, target, NULL, 0, "the master of this process, called directly");
  run_checks(graph, ops, target, kUseRpcConfig, sizeof(kUseRpcConfig), "the master over gRPC");

  TF_DeleteGraph(graph);
  TF_ServerStop(server, status);
  CHECK_OK(status, "TF_ServerStop");
  TF_DeleteServer(server);
  TF_DeleteStatus(status);
  if (failures == 0) printf("remote_session: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
