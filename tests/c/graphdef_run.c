/* Runs every GraphDef recorded from TensorFlow through the GraphDef-based
 * API (TF_NewDeprecatedSession, TF_ExtendGraph, TF_Run) and checks each
 * fetched value against the recorded one. Also checks TF_Run's documented
 * failures. Exits non-zero on any mismatch. Runs from tests/c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_api/c_api.h"
#include "check.h"
#include "npz.h"

static TF_DataType dtype_of(const char* descr) {
  if (strcmp(descr, "<f4") == 0) return TF_FLOAT;
  if (strcmp(descr, "<f8") == 0) return TF_DOUBLE;
  if (strcmp(descr, "<i4") == 0) return TF_INT32;
  if (strcmp(descr, "<i8") == 0) return TF_INT64;
  if (strcmp(descr, "|u1") == 0) return TF_UINT8;
  if (strcmp(descr, "|b1") == 0) return TF_BOOL;
  return (TF_DataType)0;
}

static void free_copy(void* data, size_t length, void* arg) {
  (void)length;
  (void)arg;
  free(data);
}

/* A feed tensor over a malloc'ed copy of the recorded array; deleting it
 * frees the copy through the deallocator. */
static TF_Tensor* tensor_from(const NpyArray* array) {
  void* copy = malloc(array->bytes > 0 ? array->bytes : 1);
  memcpy(copy, array->data, array->bytes);
  return TF_NewTensor(dtype_of(array->descr), array->dims, array->rank, copy, array->bytes,
                      free_copy, NULL);
}

/* Element i as a double. The recorded arrays sit inside the npz file at any
 * address, so each element is copied out rather than read in place. */
static double element(const void* data, TF_DataType dtype, size_t i) {
  const unsigned char* bytes = (const unsigned char*)data;
  float f;
  double d;
  int32_t i32;
  int64_t i64;
  switch (dtype) {
    case TF_FLOAT:
      memcpy(&f, bytes + i * sizeof f, sizeof f);
      return f;
    case TF_DOUBLE:
      memcpy(&d, bytes + i * sizeof d, sizeof d);
      return d;
    case TF_INT32:
      memcpy(&i32, bytes + i * sizeof i32, sizeof i32);
      return i32;
    case TF_INT64:
      memcpy(&i64, bytes + i * sizeof i64, sizeof i64);
      return (double)i64;
    case TF_UINT8:
    case TF_BOOL:
      return bytes[i];
    default:
      return NAN;
  }
}

static void compare(const char* fixture, const NpyArray* want, const TF_Tensor* got) {
  const TF_DataType dtype = dtype_of(want->descr);
  size_t i, count = want->bytes / want->item_size;
  int d;
  CHECK(TF_TensorType(got) == dtype, "%s %s: dtype %d, want %d", fixture, want->name,
        TF_TensorType(got), dtype);
  CHECK(TF_NumDims(got) == want->rank, "%s %s: rank %d, want %d", fixture, want->name,
        TF_NumDims(got), want->rank);
  if (TF_TensorType(got) != dtype || TF_NumDims(got) != want->rank) return;
  for (d = 0; d < want->rank; ++d) {
    CHECK(TF_Dim(got, d) == want->dims[d], "%s %s: dim %d is %lld, want %lld", fixture, want->name,
          d, (long long)TF_Dim(got, d), (long long)want->dims[d]);
  }
  CHECK(TF_TensorByteSize(got) == want->bytes, "%s %s: %zu bytes, want %zu", fixture, want->name,
        TF_TensorByteSize(got), want->bytes);
  if (TF_TensorByteSize(got) != want->bytes) return;
  for (i = 0; i < count; ++i) {
    const double a = element(TF_TensorData(got), dtype, i);
    const double b = element(want->data, dtype, i);
    const double tolerance = (dtype == TF_FLOAT ? 1e-5 : 1e-9) * (1 + fabs(b));
    CHECK(fabs(a - b) <= tolerance, "%s %s[%zu] = %.9g, want %.9g", fixture, want->name, i, a, b);
  }
}

/* Extends a fresh session with `fixture`.pb, feeds the recorded feed__
 * arrays, fetches every fetch__ tensor and compares. */
static void run_fixture(const char* fixture) {
  char path[256];
  size_t pb_size = 0, npz_size = 0;
  unsigned char* pb;
  unsigned char* npz;
  NpyArray arrays[NPZ_MAX_ARRAYS];
  const NpyArray* fetches[NPZ_MAX_ARRAYS];
  const char* feed_names[NPZ_MAX_ARRAYS];
  const char* fetch_names[NPZ_MAX_ARRAYS];
  TF_Tensor* inputs[NPZ_MAX_ARRAYS];
  TF_Tensor* outputs[NPZ_MAX_ARRAYS];
  int count, i, nfeeds = 0, nfetches = 0, fed;
  TF_Status* status = TF_NewStatus();
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_DeprecatedSession* session;

  snprintf(path, sizeof(path), "../fixtures/tf_graphs/%s.pb", fixture);
  pb = npz_read_file(path, &pb_size);
  snprintf(path, sizeof(path), "../fixtures/tf_graphs/%s.npz", fixture);
  npz = npz_read_file(path, &npz_size);
  CHECK(pb != NULL && npz != NULL, "%s: cannot read the fixture files", fixture);
  count = pb && npz ? npz_list(npz, npz_size, arrays) : -1;
  CHECK(count > 0, "%s: cannot read the recorded arrays", fixture);
  for (i = 0; i < count; ++i) {
    if (strncmp(arrays[i].name, "feed__", 6) == 0) {
      feed_names[nfeeds] = arrays[i].name + 6;
      inputs[nfeeds++] = tensor_from(&arrays[i]);
    } else if (strncmp(arrays[i].name, "fetch__", 7) == 0) {
      fetches[nfetches] = &arrays[i];
      fetch_names[nfetches++] = arrays[i].name + 7;
    }
  }

  session = TF_NewDeprecatedSession(options, status);
  CHECK(TF_GetCode(status) == TF_OK, "%s: new session: %s", fixture, TF_Message(status));
  if (session != NULL && count > 0) {
    TF_ExtendGraph(session, pb, pb_size, status);
    CHECK(TF_GetCode(status) == TF_OK, "%s: extend: %s", fixture, TF_Message(status));
    /* The inputs stay ours (as in TensorFlow 1.15 and 2.x): freed below. */
    TF_Run(session, NULL, feed_names, inputs, nfeeds, fetch_names, outputs, nfetches, NULL, 0, NULL,
           status);
    fed = nfeeds;
    CHECK(TF_GetCode(status) == TF_OK, "%s: run: %s", fixture, TF_Message(status));
    for (i = 0; i < nfetches; ++i) {
      if (TF_GetCode(status) == TF_OK) compare(fixture, fetches[i], outputs[i]);
      TF_DeleteTensor(outputs[i]);
    }
    printf("%-16s %d feeds, %d fetches checked\n", fixture, fed, nfetches);
  }
  for (i = 0; i < nfeeds; ++i) TF_DeleteTensor(inputs[i]);
  TF_CloseDeprecatedSession(session, status);
  TF_DeleteDeprecatedSession(session, status);
  TF_DeleteSessionOptions(options);
  TF_DeleteStatus(status);
  free(pb);
  free(npz);
}

/* TF_Run errors: an unknown name, and a wrongly typed feed. Outputs are
 * NULL after a failure, and the inputs stay the caller's either way (a
 * double free under valgrind otherwise). */
static void run_failures(void) {
  size_t size = 0;
  unsigned char* pb = npz_read_file("../fixtures/tf_graphs/affine.pb", &size);
  TF_Status* status = TF_NewStatus();
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_DeprecatedSession* session = TF_NewDeprecatedSession(options, status);
  const char* feed_name[1] = {"x:0"};
  const char* fetch_name[1] = {"no_such_node:0"};
  const char* good_fetch[1] = {"y:0"};
  int64_t dims[2] = {1, 4};
  TF_Tensor* feed[1];
  TF_Tensor* fetched[1];

  CHECK(pb != NULL, "cannot read affine.pb");
  TF_ExtendGraph(session, pb, size, status);
  CHECK(TF_GetCode(status) == TF_OK, "extend: %s", TF_Message(status));

  feed[0] = TF_AllocateTensor(TF_FLOAT, dims, 2, 4 * sizeof(float));
  memset(TF_TensorData(feed[0]), 0, 4 * sizeof(float));
  fetched[0] = (TF_Tensor*)feed; /* anything non-NULL: a failure must reset it */
  TF_Run(session, NULL, feed_name, feed, 1, fetch_name, fetched, 1, NULL, 0, NULL, status);
  CHECK(TF_GetCode(status) == TF_NOT_FOUND, "unknown fetch gave %d: %s", TF_GetCode(status),
        TF_Message(status));
  CHECK(fetched[0] == NULL, "outputs must be NULL after a failure");
  /* Still ours after the run: readable, and deleted here exactly once. */
  CHECK(TF_TensorByteSize(feed[0]) == 4 * sizeof(float), "the fed tensor changed");
  TF_DeleteTensor(feed[0]);

  feed[0] = TF_AllocateTensor(TF_INT32, dims, 2, 4 * sizeof(int32_t));
  memset(TF_TensorData(feed[0]), 0, 4 * sizeof(int32_t));
  TF_Run(session, NULL, feed_name, feed, 1, good_fetch, fetched, 1, NULL, 0, NULL, status);
  CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT, "int32 feed for a float placeholder gave %d",
        TF_GetCode(status));
  TF_DeleteTensor(feed[0]);

  TF_ExtendGraph(session, "garbage", 7, status);
  CHECK(TF_GetCode(status) == TF_INVALID_ARGUMENT, "garbage GraphDef gave %d", TF_GetCode(status));

  TF_DeleteDeprecatedSession(session, status);
  CHECK(TF_GetCode(status) == TF_OK, "delete: %s", TF_Message(status));
  TF_DeleteSessionOptions(options);
  TF_DeleteStatus(status);
  free(pb);
}

int main(void) {
  run_fixture("affine");
  run_fixture("mlp_frozen");
  run_fixture("reductions_f64");
  run_failures();
  if (failures > 0) {
    fprintf(stderr, "graphdef_run: %d check(s) failed\n", failures);
    return 1;
  }
  printf("graphdef_run: all checks passed\n");
  return 0;
}
