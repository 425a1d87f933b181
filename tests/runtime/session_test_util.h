// Helpers for session and executor tests: GraphDef building, small tensors
// and test-only ops (registered in session_test_util.cc, names prefixed
// SessionTest) whose behaviour the tests control.
#ifndef TENSORWEAVE_TESTS_RUNTIME_SESSION_TEST_UTIL_H_
#define TENSORWEAVE_TESTS_RUNTIME_SESSION_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <atomic>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/tensor.h"
#include "tensorweave/proto/graph.pb.h"

namespace tensorweave {
namespace session_test {

// Test ops:
//   SessionTestScalar()        -> float scalar `value`
//   SessionTestAffine(x)       -> x * scale + offset (declares itself expensive)
//   SessionTestSum(a, b)       -> a + b (b may be a scalar)
//   SessionTestFail(x)         -> always INVALID_ARGUMENT "SessionTestFail always fails"
//   SessionTestCounter()       -> int32 scalar; counts its runs in counter_runs
//   SessionTestSleep(x)        -> x, after sleeping `millis` (expensive, not cancellable)
//   SessionTestWaitForCancel() -> float; finishes CANCELLED when its step is cancelled
extern std::atomic<int> counter_runs;

// Appends a node to `graph`; attrs are set with the typed helpers below.
NodeDef* AddNode(GraphDef* graph, const std::string& name, const std::string& op,
                 std::initializer_list<std::string> inputs = {}, const std::string& device = "");
void SetAttr(NodeDef* node, const std::string& name, float value);
void SetAttr(NodeDef* node, const std::string& name, int64_t value);
void SetAttr(NodeDef* node, const std::string& name, bool value);
void SetAttr(NodeDef* node, const std::string& name, DataType value);
void SetAttr(NodeDef* node, const std::string& name, const std::string& value);
void SetAttr(NodeDef* node, const std::string& name, const Tensor& value);
void SetAttr(NodeDef* node, const std::string& name, const PartialTensorShape& value);

// Shorthands for common nodes.
NodeDef* AddScalar(GraphDef* graph, const std::string& name, float value,
                   const std::string& device = "");
NodeDef* AddAffine(GraphDef* graph, const std::string& name, const std::string& input, float scale,
                   float offset, const std::string& device = "");
// A float placeholder of unknown shape built from the real Placeholder op.
NodeDef* AddPlaceholder(GraphDef* graph, const std::string& name,
                        const PartialTensorShape& shape = PartialTensorShape(),
                        DataType dtype = DT_FLOAT);
// A node that blocks its step until the step is cancelled. User graphs may
// not hold internal ops such as _Recv, so session tests block with this.
NodeDef* AddWaitForCancel(GraphDef* graph, const std::string& name);
// A client-terminated _Recv nobody sends to, for executor tests that build
// graphs directly: a step using it blocks until cancelled.
NodeDef* AddBlockingRecv(GraphDef* graph, const std::string& name);

Tensor FloatVector(const std::vector<float>& values);
Tensor FloatScalar(float value);
std::vector<float> Values(const Tensor& tensor);

}  // namespace session_test
}  // namespace tensorweave

// Evaluate `expr` once and print the status when it is not OK.
#define SESSION_ASSERT_OK(expr)                          \
  do {                                                   \
    const ::tensorweave::Status session_status = (expr); \
    ASSERT_TRUE(session_status.ok()) << session_status;  \
  } while (0)
#define SESSION_EXPECT_OK(expr)                          \
  do {                                                   \
    const ::tensorweave::Status session_status = (expr); \
    EXPECT_TRUE(session_status.ok()) << session_status;  \
  } while (0)

#endif  // TENSORWEAVE_TESTS_RUNTIME_SESSION_TEST_UTIL_H_
