/* String tensors as a TensorFlow 2.x program writes them: TF_TString
 * elements set with TF_StringInit/TF_StringCopy/TF_StringAssignView, fed
 * through a session (Placeholder -> Identity, and a Const made from a
 * TF_NewTensor over the program's own TF_TString array), fetched back and
 * read with TF_StringGetDataPointer/TF_StringGetSize; a malformed element
 * is refused. Run plainly and under valgrind (no leak: the tensors and the
 * deallocators free every LARGE element). Exits non-zero on any mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_api/c_api.h"
#include "check.h"

static TF_Output output_of(TF_Operation* oper) {
  TF_Output output;
  output.oper = oper;
  output.index = 0;
  return output;
}

/* Compares element `i` of a fetched string tensor with `expected`. */
static void expect_string(const TF_Tensor* tensor, int64_t i, const char* expected) {
  const TF_TString* elements = (const TF_TString*)TF_TensorData(tensor);
  const size_t size = TF_StringGetSize(&elements[i]);
  CHECK(size == strlen(expected) &&
            memcmp(TF_StringGetDataPointer(&elements[i]), expected, size) == 0,
        "element %d: got %.*s, want %s", (int)i, (int)size, TF_StringGetDataPointer(&elements[i]),
        expected);
}

/* The deallocator a TensorFlow program passes with its own TF_TString
 * array: it deallocates each element, then the array. */
static void free_tstrings(void* data, size_t length, void* arg) {
  TF_TString* elements = (TF_TString*)data;
  size_t i;
  (void)arg;
  for (i = 0; i < length / sizeof(TF_TString); ++i) TF_StringDealloc(&elements[i]);
  free(data);
}

/* Runs `session` feeding `feed` to `input` and fetching `fetch`; returns the
 * fetched tensor or NULL (then `status` says why). */
static TF_Tensor* run(TF_Session* session, TF_Output input, TF_Tensor* feed, TF_Output fetch,
                      TF_Status* status) {
  TF_Tensor* result = NULL;
  TF_SessionRun(session, NULL, &input, &feed, feed ? 1 : 0, &fetch, &result, 1, NULL, 0, NULL,
                status);
  return result;
}

int main(void) {
  static const char long_text[] = "a string far longer than the twenty-two inline bytes";
  static const char viewed[] = "viewed, not copied";
  const int64_t three[1] = {3};
  const int64_t two[1] = {2};
  TF_Status* status = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_OperationDescription* desc;
  TF_Operation *input, *copy, *constant;
  TF_Session* session;
  TF_Tensor *feed, *fetched, *value;
  TF_TString* elements;
  int64_t i;

  CHECK(sizeof(TF_TString) == 24, "sizeof(TF_TString) is %d", (int)sizeof(TF_TString));

  desc = TF_NewOperation(graph, "Placeholder", "input");
  TF_SetAttrType(desc, "dtype", TF_STRING);
  input = TF_FinishOperation(desc, status);
  CHECK_OK(status, "Placeholder");
  desc = TF_NewOperation(graph, "Identity", "copy");
  TF_AddInput(desc, output_of(input));
  copy = TF_FinishOperation(desc, status);
  CHECK_OK(status, "Identity");

  /* A Const whose value is the program's own TF_TString array. */
  elements = (TF_TString*)malloc(2 * sizeof(TF_TString));
  TF_StringInit(&elements[0]);
  TF_StringInit(&elements[1]);
  TF_StringCopy(&elements[0], "const", 5);
  TF_StringCopy(&elements[1], long_text, strlen(long_text));
  value = TF_NewTensor(TF_STRING, two, 1, elements, 2 * sizeof(TF_TString), free_tstrings, NULL);
  CHECK(value != NULL, "TF_NewTensor");
  desc = TF_NewOperation(graph, "Const", "constant");
  TF_SetAttrTensor(desc, "value", value, status);
  CHECK_OK(status, "TF_SetAttrTensor");
  TF_SetAttrType(desc, "dtype", TF_STRING);
  TF_DeleteTensor(value); /* the attr keeps its own copy */
  constant = TF_FinishOperation(desc, status);
  CHECK_OK(status, "Const");

  session = TF_NewSession(graph, options, status);
  CHECK_OK(status, "TF_NewSession");

  /* Feed SMALL, LARGE and VIEW elements, fetch them back. */
  feed = TF_AllocateTensor(TF_STRING, three, 1, 3 * sizeof(TF_TString));
  elements = (TF_TString*)TF_TensorData(feed);
  for (i = 0; i < 3; ++i) TF_StringInit(&elements[i]);
  TF_StringCopy(&elements[0], "small", 5);
  TF_StringCopy(&elements[1], long_text, strlen(long_text));
  TF_StringAssignView(&elements[2], viewed, strlen(viewed));
  CHECK(TF_StringGetType(&elements[0]) == TF_TSTR_SMALL, "SMALL");
  CHECK(TF_StringGetType(&elements[1]) == TF_TSTR_LARGE, "LARGE");
  CHECK(TF_StringGetType(&elements[2]) == TF_TSTR_VIEW, "VIEW");
  CHECK(TF_StringGetCapacity(&elements[0]) == TF_TString_SmallCapacity, "small capacity");
  fetched = run(session, output_of(input), feed, output_of(copy), status);
  CHECK_OK(status, "run Identity");
  if (fetched != NULL) {
    CHECK(TF_TensorType(fetched) == TF_STRING, "fetched type %d", TF_TensorType(fetched));
    CHECK(TF_TensorElementCount(fetched) == 3, "fetched count");
    CHECK(TF_TensorByteSize(fetched) == 3 * sizeof(TF_TString), "fetched bytes");
    expect_string(fetched, 0, "small");
    expect_string(fetched, 1, long_text);
    expect_string(fetched, 2, viewed);
    TF_DeleteTensor(fetched); /* frees its LARGE element */
  }
  /* TensorFlow programs deallocate each element before deleting the tensor;
   * here the tensor would do it, and doing both is harmless. */
  for (i = 0; i < 3; ++i) TF_StringDealloc(&elements[i]);
  TF_DeleteTensor(feed);

  fetched = run(session, output_of(input), NULL, output_of(constant), status);
  CHECK_OK(status, "run Const");
  if (fetched != NULL) {
    expect_string(fetched, 0, "const");
    expect_string(fetched, 1, long_text);
    TF_DeleteTensor(fetched);
  }

  /* A LARGE element whose size exceeds its capacity is refused. */
  feed = TF_AllocateTensor(TF_STRING, NULL, 0, sizeof(TF_TString));
  elements = (TF_TString*)TF_TensorData(feed);
  elements[0].u.large.size = (100 << 2) | TF_TSTR_LARGE;
  elements[0].u.large.cap = 15;
  elements[0].u.large.ptr = NULL;
  fetched = run(session, output_of(input), feed, output_of(copy), status);
  CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT && fetched == NULL,
        "a malformed element: code %d", TF_GetCode(status));
  TF_StringInit(&elements[0]); /* nothing for TF_DeleteTensor to free */
  TF_DeleteTensor(feed);

  TF_CloseSession(session, status);
  CHECK_OK(status, "TF_CloseSession");
  TF_DeleteSession(session, status);
  TF_DeleteSessionOptions(options);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(status);
  if (failures == 0) printf("tstring: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
