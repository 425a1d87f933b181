/* Partial runs as TensorFlow C programs write them: TF_SessionPRunSetup,
 * TF_SessionPRun and TF_DeletePRunHandle on a graph session, TF_PRunSetup
 * and TF_PRun on a GraphDef session; values, TensorFlow's errors, and an
 * unfinished run ended by closing the session. Exits non-zero on any
 * mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_api/c_api.h"
#include "check.h"
#include "graph_build.h"

static const float kOne = 1, kTwo = 2, kThree = 3;

/* Feeds `count` scalars into `feeds`, fetches `nfetches` outputs into `got`. */
static void prun(TF_Session* session, const char* handle, const TF_Output* feeds,
                 const float* values, int count, const TF_Output* fetches, TF_Tensor** got,
                 int nfetches, TF_Status* status) {
  TF_Tensor* tensors[3];
  int i;
  for (i = 0; i < count; ++i) tensors[i] = floats(&values[i], NULL, 0);
  TF_SessionPRun(session, handle, feeds, tensors, count, fetches, got, nfetches, NULL, 0, status);
  for (i = 0; i < count; ++i) TF_DeleteTensor(tensors[i]); /* the caller keeps its inputs */
}

int main(void) {
  TF_Status* status = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_Session* session;
  TF_Operation *a, *b, *c, *r1, *r2;
  TF_Output feeds[3], fetches[2];
  TF_Tensor* got[2] = {NULL, NULL};
  const char* handle = NULL;
  const char* unfinished = NULL;

  (void)constant; /* graph_build.h's constants are not needed here */
  /* r1 = a + b; r2 = r1 * c */
  a = placeholder(graph, status, "a", NULL, 0);
  b = placeholder(graph, status, "b", NULL, 0);
  c = placeholder(graph, status, "c", NULL, 0);
  r1 = binary(graph, status, "AddV2", "r1", a, b);
  r2 = binary(graph, status, "Mul", "r2", r1, c);
  if (failures > 0) return 1;
  feeds[0] = out(a);
  feeds[1] = out(b);
  feeds[2] = out(c);
  fetches[0] = out(r1);
  fetches[1] = out(r2);

  session = TF_NewSession(graph, options, status);
  CHECK_OK(status, "new session");
  TF_DeleteSessionOptions(options);

  /* Two steps over three calls. */
  TF_SessionPRunSetup(session, feeds, 3, fetches, 2, NULL, 0, &handle, status);
  CHECK_OK(status, "setup");
  CHECK(handle != NULL, "setup gave no handle");
  {
    const float ab[2] = {1, 2};
    const float want = 3;
    prun(session, handle, feeds, ab, 2, &fetches[0], got, 1, status);
    CHECK_OK(status, "r1 from a and b");
    expect(got[0], &want, 1, "r1");
  }
  {
    /* Feeding a again is refused; the step carries on. */
    prun(session, handle, &feeds[0], &kOne, 1, NULL, got, 0, status);
    CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT &&
              strstr(TF_Message(status), "has already been fed") != NULL,
          "feeding a twice: %d %s", TF_GetCode(status), TF_Message(status));
  }
  {
    const float want = 9;
    prun(session, handle, &feeds[2], &kThree, 1, &fetches[1], got, 1, status);
    CHECK_OK(status, "r2 from c");
    expect(got[0], &want, 1, "r2");
  }
  /* The run is over: its handle names nothing now. */
  prun(session, handle, NULL, NULL, 0, &fetches[1], got, 1, status);
  CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT && got[0] == NULL, "a finished handle: %d %s",
        TF_GetCode(status), TF_Message(status));
  TF_DeletePRunHandle(handle);

  /* A fetch that needs a feed not given yet. */
  TF_SessionPRunSetup(session, feeds, 3, fetches, 2, NULL, 0, &unfinished, status);
  CHECK_OK(status, "second setup");
  prun(session, unfinished, &feeds[0], &kTwo, 1, &fetches[1], got, 1, status);
  CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT &&
            strstr(TF_Message(status), "can't be computed from the feeds") != NULL,
        "r2 from a alone: %d %s", TF_GetCode(status), TF_Message(status));
  /* Left unfinished: closing the session ends it. */
  TF_DeletePRunHandle(unfinished);
  TF_DeletePRunHandle(NULL);

  /* The deprecated GraphDef session does the same by names. */
  {
    TF_Buffer* graph_def = TF_NewBuffer();
    TF_SessionOptions* deprecated_options = TF_NewSessionOptions();
    TF_DeprecatedSession* deprecated = TF_NewDeprecatedSession(deprecated_options, status);
    const char* feed_names[3] = {"a:0", "b:0", "c:0"};
    const char* fetch_names[2] = {"r1:0", "r2:0"};
    const float ab[2] = {4, 5}, want_r1 = 9, want_r2 = 18;
    TF_Tensor* inputs[2];
    CHECK_OK(status, "deprecated session");
    TF_DeleteSessionOptions(deprecated_options);
    TF_GraphToGraphDef(graph, graph_def, status);
    CHECK_OK(status, "graph def");
    TF_ExtendGraph(deprecated, graph_def->data, graph_def->length, status);
    CHECK_OK(status, "extend");
    TF_DeleteBuffer(graph_def);
    TF_PRunSetup(deprecated, feed_names, 3, fetch_names, 2, NULL, 0, &handle, status);
    CHECK_OK(status, "TF_PRunSetup");
    inputs[0] = floats(&ab[0], NULL, 0);
    inputs[1] = floats(&ab[1], NULL, 0);
    TF_PRun(deprecated, handle, feed_names, inputs, 2, fetch_names, got, 1, NULL, 0, status);
    CHECK_OK(status, "TF_PRun r1");
    expect(got[0], &want_r1, 1, "deprecated r1");
    TF_DeleteTensor(inputs[0]);
    TF_DeleteTensor(inputs[1]);
    inputs[0] = floats(&kTwo, NULL, 0);
    TF_PRun(deprecated, handle, &feed_names[2], inputs, 1, &fetch_names[1], got, 1, NULL, 0,
            status);
    CHECK_OK(status, "TF_PRun r2");
    expect(got[0], &want_r2, 1, "deprecated r2");
    TF_DeleteTensor(inputs[0]);
    TF_DeletePRunHandle(handle);
    TF_CloseDeprecatedSession(deprecated, status);
    CHECK_OK(status, "close deprecated");
    TF_DeleteDeprecatedSession(deprecated, status);
    CHECK_OK(status, "delete deprecated");
  }

  TF_CloseSession(session, status);
  CHECK_OK(status, "close");
  TF_DeleteSession(session, status);
  CHECK_OK(status, "delete session");
  TF_DeleteGraph(graph);
  TF_DeleteStatus(status);
  if (failures == 0) printf("partial_run: OK\n");
  return failures == 0 ? 0 : 1;
}
