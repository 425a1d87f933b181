/* A C program written as TensorFlow users write them, against TensorFlow's
 * header path <tensorflow/c/c_api.h> (the build's include/ directory):
 * imports a GraphDef that TensorFlow wrote (affine.pb: y = x * 2 + 1) with
 * results and an input mapping, reads list attrs, evaluates a constant,
 * runs the imported graph, and runs the same GraphDef through the
 * deprecated TF_Run, after which the program frees its input tensors itself
 * (as TensorFlow 1.15 and 2.x require; a TF_Run that freed them made this a
 * double free under valgrind). Exits non-zero on any mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorflow/c/c_api.h>

static int failures = 0;

#define EXPECT(condition, ...)                             \
  do {                                                     \
    if (!(condition)) {                                    \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      ++failures;                                          \
    }                                                      \
  } while (0)

#define EXPECT_OK(status, what) \
  EXPECT(TF_GetCode(status) == TF_OK, "%s: %s", what, TF_Message(status))

static void free_buffer_data(void* data, size_t length) {
  (void)length;
  free(data);
}

/* The file's bytes in a new TF_Buffer, or NULL. */
static TF_Buffer* read_file(const char* path) {
  FILE* file = fopen(path, "rb");
  TF_Buffer* buffer;
  long size;
  void* data;
  if (file == NULL) return NULL;
  fseek(file, 0, SEEK_END);
  size = ftell(file);
  fseek(file, 0, SEEK_SET);
  data = malloc((size_t)size);
  if (data == NULL || fread(data, 1, (size_t)size, file) != (size_t)size) {
    free(data);
    fclose(file);
    return NULL;
  }
  fclose(file);
  buffer = TF_NewBuffer();
  buffer->data = data;
  buffer->length = (size_t)size;
  buffer->data_deallocator = free_buffer_data;
  return buffer;
}

static TF_Tensor* float_matrix(const float* values, int64_t rows, int64_t cols) {
  int64_t dims[2];
  TF_Tensor* tensor;
  dims[0] = rows;
  dims[1] = cols;
  tensor = TF_AllocateTensor(TF_FLOAT, dims, 2, (size_t)(rows * cols) * sizeof(float));
  memcpy(TF_TensorData(tensor), values, (size_t)(rows * cols) * sizeof(float));
  return tensor;
}

static void check_affine(TF_Tensor* result, const float* x, const char* what) {
  const float* y = (const float*)TF_TensorData(result);
  int i;
  EXPECT(TF_TensorElementCount(result) == 4, "%s: %lld elements", what,
         (long long)TF_TensorElementCount(result));
  for (i = 0; i < 4; ++i) EXPECT(y[i] == x[i] * 2 + 1, "%s: y[%d] = %g", what, i, y[i]);
}

static void import_and_run(TF_Buffer* graph_def, const float* x_values) {
  TF_Status* status = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  TF_ImportGraphDefOptions* options = TF_NewImportGraphDefOptions();
  TF_OperationDescription* desc;
  TF_Operation *input, *add_y, **operations;
  TF_Output input_output, *outputs, y;
  TF_ImportGraphDefResults* results;
  TF_Tensor *feed, *fetched = NULL, *constant = NULL;
  TF_SessionOptions* session_options;
  TF_Session* session;
  const char** missing_names;
  int* missing_indexes;
  int count = 0;
  int64_t shape[2] = {-1, -1};
  int64_t dims[2] = {-1, 4};

  desc = TF_NewOperation(graph, "Placeholder", "input");
  TF_SetAttrType(desc, "dtype", TF_FLOAT);
  TF_SetAttrShape(desc, "shape", dims, 2);
  input = TF_FinishOperation(desc, status);
  EXPECT_OK(status, "placeholder");

  input_output.oper = input;
  input_output.index = 0;
  TF_ImportGraphDefOptionsSetPrefix(options, "model");
  TF_ImportGraphDefOptionsAddInputMapping(options, "x", 0, input_output);
  TF_ImportGraphDefOptionsAddInputMapping(options, "ghost", 1, input_output);
  TF_ImportGraphDefOptionsAddReturnOutput(options, "y", 0);
  TF_ImportGraphDefOptionsAddReturnOperation(options, "mul");
  results = TF_GraphImportGraphDefWithResults(graph, graph_def, options, status);
  EXPECT_OK(status, "import");
  TF_DeleteImportGraphDefOptions(options);
  if (results == NULL) {
    TF_DeleteGraph(graph);
    TF_DeleteStatus(status);
    return;
  }
  TF_ImportGraphDefResultsReturnOutputs(results, &count, &outputs);
  EXPECT(count == 1 && strcmp(TF_OperationName(outputs[0].oper), "model/y") == 0, "return output");
  y = outputs[0];
  TF_ImportGraphDefResultsReturnOperations(results, &count, &operations);
  EXPECT(count == 1 && strcmp(TF_OperationName(operations[0]), "model/mul") == 0,
         "return operation");
  TF_ImportGraphDefResultsMissingUnusedInputMappings(results, &count, &missing_names,
                                                     &missing_indexes);
  EXPECT(count == 1 && strcmp(missing_names[0], "ghost") == 0 && missing_indexes[0] == 1,
         "unused input mappings: %d", count);
  TF_DeleteImportGraphDefResults(results);

  /* The mapping rewired model/mul to read our placeholder. */
  EXPECT(
      TF_OperationInput((TF_Input){TF_GraphOperationByName(graph, "model/mul"), 0}).oper == input,
      "model/mul reads input");
  /* The shape attr of the imported placeholder, and what fits of it. */
  TF_OperationGetAttrShape(TF_GraphOperationByName(graph, "model/x"), "shape", shape, 1, status);
  EXPECT_OK(status, "shape attr");
  EXPECT(shape[0] == -1 && shape[1] == -1, "only one dim copied: %lld %lld", (long long)shape[0],
         (long long)shape[1]);

  /* A constant folds; the output that depends on the feed does not. */
  add_y = TF_GraphOperationByName(graph, "model/add/y");
  EXPECT(TF_TryEvaluateConstant(graph, (TF_Output){add_y, 0}, &constant, status) == 1,
         "add/y is constant");
  EXPECT_OK(status, "evaluate add/y");
  if (constant != NULL) {
    EXPECT(*(const float*)TF_TensorData(constant) == 1.0f, "add/y = 1");
    TF_DeleteTensor(constant);
  }
  constant = NULL;
  EXPECT(TF_TryEvaluateConstant(graph, y, &constant, status) == 0 && constant == NULL,
         "y is not constant");
  EXPECT_OK(status, "evaluate y");

  session_options = TF_NewSessionOptions();
  session = TF_NewSession(graph, session_options, status);
  EXPECT_OK(status, "new session");
  feed = float_matrix(x_values, 1, 4);
  TF_SessionRun(session, NULL, &input_output, &feed, 1, &y, &fetched, 1, NULL, 0, NULL, status);
  EXPECT_OK(status, "run");
  if (fetched != NULL) {
    check_affine(fetched, x_values, "imported");
    TF_DeleteTensor(fetched);
  }
  TF_DeleteTensor(feed);
  TF_CloseSession(session, status);
  TF_DeleteSession(session, status);
  TF_DeleteSessionOptions(session_options);
  TF_DeleteGraph(graph);
  TF_DeleteStatus(status);
}

static void list_attrs(void) {
  TF_Status* status = TF_NewStatus();
  TF_Graph* graph = TF_NewGraph();
  TF_OperationDescription* desc;
  TF_Operation *images, *pool;
  TF_Output pool_input;
  int64_t dims[4] = {1, 4, 4, 1}, ksize[4] = {1, 2, 2, 1}, strides[4] = {1, 2, 2, 1};
  int64_t read[4] = {0, 0, 0, 0};
  TF_AttrMetadata metadata;
  int i;

  desc = TF_NewOperation(graph, "Placeholder", "images");
  TF_SetAttrType(desc, "dtype", TF_FLOAT);
  TF_SetAttrShape(desc, "shape", dims, 4);
  images = TF_FinishOperation(desc, status);
  pool_input.oper = images;
  pool_input.index = 0;
  desc = TF_NewOperation(graph, "MaxPool", "pool");
  TF_AddInput(desc, pool_input);
  TF_SetAttrIntList(desc, "ksize", ksize, 4);
  TF_SetAttrIntList(desc, "strides", strides, 4);
  TF_SetAttrString(desc, "padding", "VALID", 5);
  TF_ColocateWith(desc, images);
  pool = TF_FinishOperation(desc, status);
  EXPECT_OK(status, "MaxPool");
  if (pool != NULL) {
    metadata = TF_OperationGetAttrMetadata(pool, "ksize", status);
    EXPECT(metadata.is_list == 1 && metadata.list_size == 4, "ksize metadata");
    TF_OperationGetAttrIntList(pool, "ksize", read, 4, status);
    EXPECT_OK(status, "ksize");
    for (i = 0; i < 4; ++i) EXPECT(read[i] == ksize[i], "ksize[%d] = %lld", i, (long long)read[i]);
    EXPECT(TF_OperationInputListLength(pool, "input", status) == 1, "input list length");
    {
      void* values[1];
      size_t lengths[1];
      char storage[16];
      TF_OperationGetAttrStringList(pool, "_class", values, lengths, 1, storage, sizeof storage,
                                    status);
      EXPECT_OK(status, "_class");
      EXPECT(lengths[0] == 11 && memcmp(values[0], "loc:@images", 11) == 0, "colocation");
    }
  }
  TF_DeleteGraph(graph);
  TF_DeleteStatus(status);
}

static void deprecated_run(TF_Buffer* graph_def, const float* x_values) {
  TF_Status* status = TF_NewStatus();
  TF_SessionOptions* options = TF_NewSessionOptions();
  TF_DeprecatedSession* session = TF_NewDeprecatedSession(options, status);
  const char* input_names[1] = {"x:0"};
  const char* output_names[1] = {"y:0"};
  TF_Tensor* inputs[1];
  TF_Tensor* outputs[1] = {NULL};

  EXPECT_OK(status, "new deprecated session");
  TF_ExtendGraph(session, graph_def->data, graph_def->length, status);
  EXPECT_OK(status, "extend");
  inputs[0] = float_matrix(x_values, 1, 4);
  TF_Run(session, NULL, input_names, inputs, 1, output_names, outputs, 1, NULL, 0, NULL, status);
  EXPECT_OK(status, "TF_Run");
  if (outputs[0] != NULL) {
    check_affine(outputs[0], x_values, "TF_Run");
    TF_DeleteTensor(outputs[0]);
  }
  /* The input is still ours: readable, and freed here. */
  EXPECT(((const float*)TF_TensorData(inputs[0]))[3] == x_values[3], "input intact");
  TF_DeleteTensor(inputs[0]);
  TF_CloseDeprecatedSession(session, status);
  TF_DeleteDeprecatedSession(session, status);
  TF_DeleteSessionOptions(options);
  TF_DeleteStatus(status);
}

int main(void) {
  static const float x_values[4] = {1, 2, -3, 0.5f};
  TF_Buffer* graph_def = read_file("../fixtures/tf_graphs/affine.pb");
  EXPECT(graph_def != NULL, "cannot read affine.pb");
  if (graph_def == NULL) return 1;
  import_and_run(graph_def, x_values);
  list_attrs();
  deprecated_run(graph_def, x_values);
  TF_DeleteBuffer(graph_def);
  printf("tensorflow_program: %s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
