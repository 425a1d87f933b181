/* Graph-building helpers shared by the C test programs that build float
 * graphs with TF_NewOperation: operations (placeholder, constant, binary
 * ops), float tensors over malloc'ed copies, and a checked comparison of a
 * fetched tensor. Header-only, like check.h, because each .c file in
 * tests/c is its own program; every helper reports through CHECK. */
#ifndef TENSORWEAVE_TESTS_C_GRAPH_BUILD_H_
#define TENSORWEAVE_TESTS_C_GRAPH_BUILD_H_

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "c_api/c_api.h"
#include "check.h"

static TF_Output out(TF_Operation* oper) {
  TF_Output output;
  output.oper = oper;
  output.index = 0;
  return output;
}

static TF_Operation* finish(TF_OperationDescription* desc, TF_Status* status, const char* what) {
  TF_Operation* oper = TF_FinishOperation(desc, status);
  CHECK_OK(status, what);
  return oper;
}

static TF_Operation* placeholder(TF_Graph* graph, TF_Status* status, const char* name,
                                 const int64_t* dims, int num_dims) {
  TF_OperationDescription* desc = TF_NewOperation(graph, "Placeholder", name);
  TF_SetAttrType(desc, "dtype", TF_FLOAT);
  TF_SetAttrShape(desc, "shape", dims, num_dims);
  return finish(desc, status, name);
}

static void free_values(void* data, size_t length, void* arg) {
  (void)length;
  (void)arg;
  free(data);
}

/* A float tensor over a malloc'ed copy of `values` (exercises TF_NewTensor
 * and its deallocator). */
static TF_Tensor* floats(const float* values, const int64_t* dims, int num_dims) {
  size_t count = 1, bytes;
  int i;
  void* data;
  for (i = 0; i < num_dims; ++i) count *= (size_t)dims[i];
  bytes = count * sizeof(float);
  data = malloc(bytes > 0 ? bytes : 1);
  memcpy(data, values, bytes);
  return TF_NewTensor(TF_FLOAT, dims, num_dims, data, bytes, free_values, NULL);
}

static TF_Operation* constant(TF_Graph* graph, TF_Status* status, const char* name,
                              const float* values, const int64_t* dims, int num_dims) {
  TF_Tensor* value = floats(values, dims, num_dims);
  TF_OperationDescription* desc = TF_NewOperation(graph, "Const", name);
  TF_SetAttrTensor(desc, "value", value, status);
  CHECK_OK(status, name);
  TF_SetAttrType(desc, "dtype", TF_FLOAT);
  TF_DeleteTensor(value); /* the attr holds its own copy */
  return finish(desc, status, name);
}

static TF_Operation* binary(TF_Graph* graph, TF_Status* status, const char* op_type,
                            const char* name, TF_Operation* a, TF_Operation* b) {
  TF_OperationDescription* desc = TF_NewOperation(graph, op_type, name);
  TF_AddInput(desc, out(a));
  TF_AddInput(desc, out(b));
  return finish(desc, status, name);
}

/* Compares a fetched tensor with `expected`, then deletes it. */
static void expect(TF_Tensor* tensor, const float* expected, int64_t count, const char* what) {
  int64_t i;
  CHECK(tensor != NULL, "%s: no tensor", what);
  if (tensor == NULL) return;
  CHECK(TF_TensorType(tensor) == TF_FLOAT, "%s: dtype %d", what, TF_TensorType(tensor));
  CHECK(TF_TensorElementCount(tensor) == count, "%s: %lld elements, want %lld", what,
        (long long)TF_TensorElementCount(tensor), (long long)count);
  if (TF_TensorElementCount(tensor) == count) {
    const float* got = (const float*)TF_TensorData(tensor);
    for (i = 0; i < count; ++i) {
      CHECK(fabsf(got[i] - expected[i]) < 1e-5f, "%s[%lld] = %g, want %g", what, (long long)i,
            got[i], expected[i]);
    }
  }
  TF_DeleteTensor(tensor);
}

#endif /* TENSORWEAVE_TESTS_C_GRAPH_BUILD_H_ */
