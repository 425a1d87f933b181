// Assert, Print, PrintV2, StringFormat, PyFunc and the tensor summaries they
// print. Expected texts are what TensorFlow 2.21 prints for the same values
// (the full comparison lives in tests/python/test_logging_ops.py).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/framework/py_func_registry.h"
#include "runtime/framework/tensor_summary.h"
#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

void AddTypeList(const std::string& attr, const DataTypeVector& types, NodeDef* node) {
  auto* list = (*node->mutable_attr())[attr].mutable_list();
  for (DataType type : types) list->add_type(type);
}

Tensor Range(const TensorShape& shape) {
  std::vector<int32_t> values(shape.num_elements());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i);
  return MakeTensor<int32_t>(shape, values);
}

TEST(TensorSummaryTest, FlatFormStopsAfterTheFirstEntries) {
  const Tensor matrix = MakeTensor<float>(TensorShape({2, 3}), {1.5, 2, 3, 4, 5, 6});
  EXPECT_EQ(SummarizeTensor(matrix, 3, SummaryStyle::kFlat), "[1.5 2 3]...");
  EXPECT_EQ(SummarizeTensor(matrix, 4, SummaryStyle::kFlat), "[1.5 2 3][4...]...");
  EXPECT_EQ(SummarizeTensor(matrix, -1, SummaryStyle::kFlat), "[1.5 2 3][4 5 6]");
  EXPECT_EQ(SummarizeTensor(Range(TensorShape({2, 2, 5})), 3, SummaryStyle::kFlat),
            "[[0 1 2...]]...");
  EXPECT_EQ(SummarizeTensor(Range(TensorShape({10})), 3, SummaryStyle::kFlat), "0 1 2...");
  EXPECT_EQ(SummarizeTensor(Scalar<int32_t>(7), 0, SummaryStyle::kFlat), "...");
  EXPECT_EQ(SummarizeTensor(Range(TensorShape({0, 3})), 3, SummaryStyle::kFlat), "");
}

TEST(TensorSummaryTest, NumpyFormKeepsBothEndsOfEveryDimension) {
  EXPECT_EQ(SummarizeTensor(Range(TensorShape({10})), 3, SummaryStyle::kNumpy),
            "[0 1 2 ... 7 8 9]");
  EXPECT_EQ(SummarizeTensor(Range(TensorShape({2, 3, 4})), 3, SummaryStyle::kNumpy),
            "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n"
            " [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]");
  EXPECT_EQ(SummarizeTensor(Range(TensorShape({10, 10})), 1, SummaryStyle::kNumpy),
            "[[0 ... 9]\n ...\n [90 ... 99]]");
  // With no entries to show, a non-empty dimension still says "...".
  EXPECT_EQ(SummarizeTensor(Range(TensorShape({2, 0})), 3, SummaryStyle::kNumpy), "[\n ...]");
  EXPECT_EQ(SummarizeTensor(Range(TensorShape({0, 3})), 3, SummaryStyle::kNumpy), "[]");
}

TEST(TensorSummaryTest, ElementsPrintAsTensorFlowPrintsThem) {
  EXPECT_EQ(FloatToShortestString(1.0f / 3), "0.333333343");
  EXPECT_EQ(FloatToShortestString(0.1f), "0.1");
  EXPECT_EQ(FloatToShortestString(-0.0f), "-0");
  EXPECT_EQ(FloatToShortestString(1e20f), "1e+20");
  EXPECT_EQ(DoubleToShortestString(1.0 / 3), "0.33333333333333331");
  EXPECT_EQ(Utf8SafeCEscape(std::string("a\"b'\n\t\\\x01\x7f\xc3\xa9")),
            "a\\\"b\\'\\n\\t\\\\\\001\\177\xc3\xa9");
  Tensor strings(DT_STRING, TensorShape({2}));
  strings.data<std::string>()[0] = "a\nb";
  strings.data<std::string>()[1] = "c";
  EXPECT_EQ(SummarizeTensor(strings, 3, SummaryStyle::kFlat), "a\\nb c");
  EXPECT_EQ(SummarizeTensor(strings, 3, SummaryStyle::kNumpy), "[\"a\\nb\" \"c\"]");
  EXPECT_EQ(SummarizeTensor(MakeBoolTensor(TensorShape({2}), {1, 0}), 3, SummaryStyle::kFlat),
            "1 0");
  // TensorFlow shows nothing at all for bools when no entry is shown.
  EXPECT_EQ(SummarizeTensor(MakeBoolTensor(TensorShape({2}), {1, 0}), 0, SummaryStyle::kFlat), "");
  EXPECT_EQ(SummarizeTensor(Vector<int8_t>({-3, 4}), 3, SummaryStyle::kNumpy), "[-3 4]");
  EXPECT_EQ(SummarizeTensor(Vector<uint8_t>({200}), 3, SummaryStyle::kNumpy), "[200]");
}

TEST(TensorSummaryTest, AHugeTensorIsSummarizedWithoutWalkingIt) {
  // 2^24 rows: both forms look at the shown entries only.
  Tensor tall(DT_INT8, TensorShape({int64_t{1} << 24, 1}));
  std::memset(tall.raw_data(), 0, tall.TotalBytes());
  EXPECT_EQ(SummarizeTensor(tall, 1, SummaryStyle::kFlat), "[0]...");
  EXPECT_EQ(SummarizeTensor(tall, 1, SummaryStyle::kNumpy), "[[0]\n ...\n [0]]");
}

TEST(TensorSummaryTest, TemplatesSplitAtEveryPlaceholder) {
  EXPECT_EQ(SplitFormatTemplate("a {} b {}", "{}"), (std::vector<std::string>{"a ", " b ", ""}));
  EXPECT_EQ(SplitFormatTemplate("none", "{}"), (std::vector<std::string>{"none"}));
  EXPECT_EQ(SplitFormatTemplate("abc", ""), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SplitFormatTemplate("", ""), (std::vector<std::string>{""}));
}

NodeDef AssertNode(const DataTypeVector& data_types, int64_t summarize = 3) {
  NodeDef node = NodeBuilder("Assert").Attr("summarize", summarize).Build();
  AddTypeList("T", data_types, &node);
  return node;
}

TEST(AssertKernelTest, PassesOnTrueAndFailsWithTheDataOnFalse) {
  KernelRunner run(AssertNode({DT_FLOAT, DT_STRING, DT_INT32}));
  TW_ASSERT_OK(run.construction_status());
  Tensor text(DT_STRING, TensorShape());
  text.data<std::string>()[0] = "hello";
  const Tensor matrix = MakeTensor<float>(TensorShape({2, 3}), {1.5, 2, 3, 4, 5, 6});
  TW_EXPECT_OK(run.Compute({Scalar<bool>(true), matrix, text, Scalar<int32_t>(7)}));
  const Status failed = run.Compute({Scalar<bool>(false), matrix, text, Scalar<int32_t>(7)});
  EXPECT_EQ(failed.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(failed.message(), "assertion failed: [[1.5 2 3]...] [hello] [7]");
}

TEST(AssertKernelTest, SummarizeBoundsEachTensor) {
  KernelRunner all(AssertNode({DT_INT32}, -1));
  EXPECT_EQ(all.Compute({Scalar<bool>(false), Range(TensorShape({5}))}).message(),
            "assertion failed: [0 1 2 3 4]");
  KernelRunner four(AssertNode({DT_INT32}, 4));
  EXPECT_EQ(four.Compute({Scalar<bool>(false), Range(TensorShape({4, 5}))}).message(),
            "assertion failed: [[0 1 2 3...]...]");
}

TEST(AssertKernelTest, ANonScalarConditionIsAnInvalidArgument) {
  KernelRunner run(AssertNode({DT_INT32}));
  ExpectError(run.Compute({MakeBoolTensor(TensorShape({2}), {1, 1}), Scalar<int32_t>(1)}),
              Code::INVALID_ARGUMENT, "In[0] should be a scalar: [2]");
}

NodeDef PrintNode(const std::string& message, int64_t first_n) {
  NodeDef node = NodeBuilder("Print")
                     .Attr("T", DT_INT32)
                     .Attr("message", message)
                     .Attr("first_n", first_n)
                     .Build();
  AddTypeList("U", {DT_FLOAT}, &node);
  return node;
}

TEST(PrintKernelTest, PassesItsInputThroughAndPrintsTheFirstNRuns) {
  KernelRunner run(PrintNode("x: ", 2));
  TW_ASSERT_OK(run.construction_status());
  testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    TW_ASSERT_OK(run.Compute({Scalar<int32_t>(i), Vector<float>({0.5f * i, 1})}));
    ExpectValues<int32_t>(run.output(0), TensorShape(), {i});
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "x: [0 1]\nx: [0.5 1]\n");
}

NodeDef PrintV2Node(const std::string& stream, const std::string& end = "\n") {
  return NodeBuilder("PrintV2").Attr("output_stream", stream).Attr("end", end).Build();
}

Tensor StringScalar(const std::string& value) {
  Tensor tensor(DT_STRING, TensorShape());
  tensor.data<std::string>()[0] = value;
  return tensor;
}

TEST(PrintV2KernelTest, WritesToTheChosenStream) {
  KernelRunner to_stdout(PrintV2Node("stdout", "!"));
  testing::internal::CaptureStdout();
  TW_ASSERT_OK(to_stdout.Compute({StringScalar("out")}));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "out!");

  KernelRunner to_log(PrintV2Node("log(error)"));
  testing::internal::CaptureStderr();
  TW_ASSERT_OK(to_log.Compute({StringScalar("bad")}));
  const std::string logged = testing::internal::GetCapturedStderr();
  EXPECT_EQ(logged.front(), 'E');
  EXPECT_EQ(logged.substr(logged.size() - 17), "logging_ops] bad\n");
}

TEST(PrintV2KernelTest, AppendsToAFile) {
  const std::string path = testing::TempDir() + "print_v2_test.txt";
  std::remove(path.c_str());
  KernelRunner run(PrintV2Node("file://" + path));
  TW_ASSERT_OK(run.Compute({StringScalar("one")}));
  TW_ASSERT_OK(run.Compute({StringScalar("two")}));
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(text.str(), "one\ntwo\n");
  KernelRunner unwritable(PrintV2Node("file:///no/such/directory/x.txt"));
  ExpectError(unwritable.Compute({StringScalar("x")}), Code::INVALID_ARGUMENT, "Could not open");
  std::remove(path.c_str());
}

TEST(PrintV2KernelTest, BadStreamsAndInputsAreInvalidArguments) {
  KernelRunner unknown(PrintV2Node("stdlog"));
  ExpectError(unknown.construction_status(), Code::INVALID_ARGUMENT,
              "Unknown output stream: stdlog, Valid streams are: stdout stderr log(info) "
              "log(warning) log(error)");
  KernelRunner run(PrintV2Node("stderr"));
  Tensor two(DT_STRING, TensorShape({2}));
  ExpectError(run.Compute({two}), Code::INVALID_ARGUMENT,
              "Input is expected to be scalar, but got [2]");
  std::vector<PartialTensorShape> shapes;
  ExpectError(InferShapes(PrintV2Node("stderr"), {Partial({2})}, {nullptr}, &shapes),
              Code::INVALID_ARGUMENT, "input must be a scalar, but has rank: 1");
}

NodeDef StringFormatNode(const std::string& format, const DataTypeVector& types,
                         const std::string& placeholder = "{}") {
  NodeDef node =
      NodeBuilder("StringFormat").Attr("template", format).Attr("placeholder", placeholder).Build();
  AddTypeList("T", types, &node);
  return node;
}

TEST(StringFormatKernelTest, FillsThePlaceholders) {
  KernelRunner run(StringFormatNode("a={} b={}!", {DT_INT32, DT_STRING}));
  TW_ASSERT_OK(run.Compute({Range(TensorShape({10})), StringScalar("x")}));
  EXPECT_EQ(run.output(0).shape(), TensorShape());
  EXPECT_EQ(run.output(0).data<std::string>()[0], "a=[0 1 2 ... 7 8 9] b=\"x\"!");
  KernelRunner no_inputs(StringFormatNode("plain", {}));
  TW_ASSERT_OK(no_inputs.Compute({}));
  EXPECT_EQ(no_inputs.output(0).data<std::string>()[0], "plain");
}

TEST(StringFormatKernelTest, PlaceholdersMustMatchTheInputs) {
  KernelRunner too_few(StringFormatNode("{} and {}", {DT_INT32}));
  ExpectError(too_few.construction_status(), Code::INVALID_ARGUMENT,
              "num placeholders in template and num inputs must match: 2 vs. 1");
  KernelRunner none(StringFormatNode("no placeholder", {DT_INT32}, "%s"));
  ExpectError(none.construction_status(), Code::INVALID_ARGUMENT, "must match: 0 vs. 1");
  std::vector<PartialTensorShape> shapes;
  ExpectError(InferShapes(StringFormatNode("{}", {}), {}, {}, &shapes), Code::INVALID_ARGUMENT,
              "must match: 1 vs. 0");
  TW_ASSERT_OK(InferShapes(StringFormatNode("{}", {DT_FLOAT}), {Unknown()}, {nullptr}, &shapes));
  EXPECT_EQ(shapes[0].dims(), 0);
}

NodeDef PyFuncNode(const DataTypeVector& in, const DataTypeVector& out) {
  NodeDef node = NodeBuilder("PyFunc").Attr("token", "pyfunc_test").Build();
  AddTypeList("Tin", in, &node);
  AddTypeList("Tout", out, &node);
  return node;
}

// Installs a callback for one test and removes it afterwards.
class PyFuncKernelTest : public ::testing::Test {
 protected:
  void TearDown() override { SetPyFuncCallback(nullptr); }
};

TEST_F(PyFuncKernelTest, WithoutACallbackItFailsCleanly) {
  SetPyFuncCallback(nullptr);
  KernelRunner run(PyFuncNode({DT_FLOAT}, {DT_FLOAT}));
  ExpectError(run.Compute({Scalar<float>(1)}), Code::INVALID_ARGUMENT,
              "Missing py trampoline: no Python binding is loaded to run pyfunc_test");
}

TEST_F(PyFuncKernelTest, PassesTokenAndInputsAndChecksTheResults) {
  std::vector<Tensor> answer;
  Status answer_status;
  std::string seen_token;
  SetPyFuncCallback([&](const std::string& token, const std::vector<Tensor>& inputs,
                        std::vector<Tensor>* outputs) {
    seen_token = token;
    EXPECT_EQ(inputs.size(), 2u);
    *outputs = answer;
    return answer_status;
  });
  KernelRunner run(PyFuncNode({DT_FLOAT, DT_INT32}, {DT_INT32}));
  answer = {Scalar<int32_t>(5)};
  TW_ASSERT_OK(run.Compute({Scalar<float>(1), Scalar<int32_t>(2)}));
  EXPECT_EQ(seen_token, "pyfunc_test");
  ExpectValues<int32_t>(run.output(0), TensorShape(), {5});

  answer = {Scalar<float>(5)};
  ExpectError(run.Compute({Scalar<float>(1), Scalar<int32_t>(2)}), Code::INVALID_ARGUMENT,
              "0-th value returned by pyfunc_test is float, but expects int32");
  answer = {Scalar<int32_t>(5), Scalar<int32_t>(6)};
  ExpectError(run.Compute({Scalar<float>(1), Scalar<int32_t>(2)}), Code::INVALID_ARGUMENT,
              "pyfunc_test returns 2 values, but expects to see 1 values.");
  answer_status = errors::OutOfRange("StopIteration: done");
  ExpectError(run.Compute({Scalar<float>(1), Scalar<int32_t>(2)}), Code::OUT_OF_RANGE,
              "StopIteration: done");
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
