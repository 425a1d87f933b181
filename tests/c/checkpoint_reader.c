/* Saves two tensors with a SaveV2 op, then reads the checkpoint back through
 * TF_CheckpointReader as a C program would: list the names, their dtypes and
 * shapes, read the values; a missing file, a missing name and a file
 * truncated under an open reader give their error codes. Exits non-zero on
 * any mismatch. */
#define _XOPEN_SOURCE 700 /* mkdtemp, truncate */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c_api/c_api.h"
#include "check.h"

static TF_Output out(TF_Operation* oper) {
  TF_Output output;
  output.oper = oper;
  output.index = 0;
  return output;
}

/* A Const op holding `tensor` (deleted here). */
static TF_Operation* constant(TF_Graph* graph, TF_Status* status, const char* name,
                              TF_Tensor* tensor) {
  TF_OperationDescription* desc = TF_NewOperation(graph, "Const", name);
  TF_SetAttrTensor(desc, "value", tensor, status);
  CHECK_OK(status, name);
  TF_SetAttrType(desc, "dtype", TF_TensorType(tensor));
  TF_DeleteTensor(tensor);
  TF_Operation* oper = TF_FinishOperation(desc, status);
  CHECK_OK(status, name);
  return oper;
}

/* A TF_STRING tensor of `count` NUL-terminated strings, shaped [count] (or a
 * scalar when `scalar`). */
static TF_Tensor* strings(const char* const* values, int count, int scalar) {
  size_t length = 8 * (size_t)count;
  for (int i = 0; i < count; ++i) length += TF_StringEncodedSize(strlen(values[i]));
  int64_t dims[1] = {count};
  TF_Tensor* tensor = TF_AllocateTensor(TF_STRING, dims, scalar ? 0 : 1, length);
  char* data = (char*)TF_TensorData(tensor);
  size_t at = 8 * (size_t)count;
  TF_Status* status = TF_NewStatus();
  for (int i = 0; i < count; ++i) {
    uint64_t offset = at - 8 * (size_t)count;
    memcpy(data + 8 * i, &offset, 8);
    at += TF_StringEncode(values[i], strlen(values[i]), data + at, length - at, status);
    CHECK_OK(status, "TF_StringEncode");
  }
  TF_DeleteStatus(status);
  return tensor;
}

static void save(const char* prefix, TF_Status* status) {
  TF_Graph* graph = TF_NewGraph();
  const char* prefix_value[1] = {prefix};
  const char* names[2] = {"bias", "dense/kernel"};
  const char* slices[2] = {"", ""};
  int64_t kernel_dims[2] = {2, 3};
  TF_Tensor* kernel = TF_AllocateTensor(TF_FLOAT, kernel_dims, 2, 6 * sizeof(float));
  for (int i = 0; i < 6; ++i) ((float*)TF_TensorData(kernel))[i] = 0.5f * (float)i;
  TF_Tensor* bias = TF_AllocateTensor(TF_INT64, NULL, 0, sizeof(int64_t));
  *(int64_t*)TF_TensorData(bias) = -7;

  TF_OperationDescription* desc = TF_NewOperation(graph, "SaveV2", "save");
  TF_AddInput(desc, out(constant(graph, status, "prefix", strings(prefix_value, 1, 1))));
  TF_AddInput(desc, out(constant(graph, status, "names", strings(names, 2, 0))));
  TF_AddInput(desc, out(constant(graph, status, "slices", strings(slices, 2, 0))));
  TF_Output values[2] = {out(constant(graph, status, "bias_value", bias)),
                         out(constant(graph, status, "kernel_value", kernel))};
  TF_AddInputList(desc, values, 2);
  TF_DataType dtypes[2] = {TF_INT64, TF_FLOAT};
  TF_SetAttrTypeList(desc, "dtypes", dtypes, 2);
  TF_Operation* save_op = TF_FinishOperation(desc, status);
  CHECK_OK(status, "SaveV2");

  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_Session* session = TF_NewSession(graph, options, status);
  CHECK_OK(status, "TF_NewSession");
  TF_DeleteSessionOptions(options);
  const TF_Operation* targets[1] = {save_op};
  TF_SessionRun(session, NULL, NULL, NULL, 0, NULL, NULL, 0, targets, 1, NULL, status);
  CHECK_OK(status, "running SaveV2");
  TF_DeleteSession(session, status);
  TF_DeleteGraph(graph);
}

int main(void) {
  char directory[] = "/tmp/tw_checkpoint_reader_XXXXXX";
  if (mkdtemp(directory) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  /* TensorFlow's V2 checkpoint: an index and one data file. */
  char prefix[sizeof(directory) + 16], file[sizeof(directory) + 48], index[sizeof(directory) + 32];
  snprintf(prefix, sizeof(prefix), "%s/model", directory);
  snprintf(file, sizeof(file), "%s.data-00000-of-00001", prefix);
  snprintf(index, sizeof(index), "%s.index", prefix);
  TF_Status* status = TF_NewStatus();
  save(prefix, status);

  TF_CheckpointReader* reader = TF_NewCheckpointReader(prefix, status);
  CHECK_OK(status, "TF_NewCheckpointReader");
  if (reader != NULL) {
    CHECK(TF_CheckpointReaderSize(reader) == 2, "size %d", TF_CheckpointReaderSize(reader));
    CHECK(strcmp(TF_CheckpointReaderGetVariable(reader, 0), "bias") == 0, "first name");
    CHECK(strcmp(TF_CheckpointReaderGetVariable(reader, 1), "dense/kernel") == 0, "second name");
    CHECK(TF_CheckpointReaderGetVariable(reader, 2) == NULL, "index past the end");
    CHECK(TF_CheckpointReaderHasTensor(reader, "bias") == 1, "has bias");
    CHECK(TF_CheckpointReaderHasTensor(reader, "nope") == 0, "has nope");
    CHECK(TF_CheckpointReaderGetVariableDataType(reader, "dense/kernel") == TF_FLOAT, "dtype");
    CHECK(TF_CheckpointReaderGetVariableNumDims(reader, "dense/kernel") == 2, "rank");
    CHECK(TF_CheckpointReaderGetVariableNumDims(reader, "nope") == -1, "rank of nope");
    int64_t dims[2] = {0, 0};
    TF_CheckpointReaderGetVariableShape(reader, "dense/kernel", dims, 2, status);
    CHECK_OK(status, "TF_CheckpointReaderGetVariableShape");
    CHECK(dims[0] == 2 && dims[1] == 3, "shape [%lld, %lld]", (long long)dims[0],
          (long long)dims[1]);

    TF_Tensor* kernel = TF_CheckpointReaderGetTensor(reader, "dense/kernel", status);
    CHECK_OK(status, "reading dense/kernel");
    if (kernel != NULL) {
      CHECK(TF_TensorByteSize(kernel) == 6 * sizeof(float), "kernel bytes");
      for (int i = 0; i < 6; ++i) {
        CHECK(((float*)TF_TensorData(kernel))[i] == 0.5f * (float)i, "kernel[%d]", i);
      }
      TF_DeleteTensor(kernel);
    }
    TF_Tensor* missing = TF_CheckpointReaderGetTensor(reader, "nope", status);
    CHECK(missing == NULL && TF_GetCode(status) == TF_NOT_FOUND, "reading nope: %s",
          TF_Message(status));

    /* Cut short under the open reader: an error, not a crash. */
    CHECK(truncate(file, 4) == 0, "truncate");
    TF_Tensor* bias = TF_CheckpointReaderGetTensor(reader, "bias", status);
    CHECK(bias == NULL && TF_GetCode(status) == TF_DATA_LOSS, "reading a truncated file: %s",
          TF_Message(status));
    TF_DeleteCheckpointReader(reader);
  }
  CHECK(TF_NewCheckpointReader(prefix, status) == NULL && TF_GetCode(status) == TF_DATA_LOSS,
        "opening a truncated file: %s", TF_Message(status));
  unlink(file);
  unlink(index);
  CHECK(TF_NewCheckpointReader(prefix, status) == NULL && TF_GetCode(status) == TF_NOT_FOUND,
        "opening a missing file: %s", TF_Message(status));
  TF_DeleteCheckpointReader(NULL);
  rmdir(directory);
  TF_DeleteStatus(status);
  if (failures == 0) printf("checkpoint_reader: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
