// RunGraph's partial runs over gRPC on loopback: one step of a registered
// graph fed and fetched over several calls with one step_id (the first
// starts the executors, the last waits for them), a value passed between
// two workers during a partial run, and how CleanupGraph and a failing
// kernel end a partial run that is still waiting. Every wait is bounded by
// the calls' timeouts.
#include <gtest/gtest.h>

#include <thread>

#include "tests/runtime/worker_test_util.h"

namespace tensorweave {
namespace {

using namespace worker_test;  // NOLINT: the helpers of these tests

// y = x * 2 + 1 (AffineGraph), then w = y * z: z comes in a later call.
GraphDef TwoFeedGraph(const TestWorker& worker) {
  GraphDef graph = AffineGraph(worker);
  const std::string& d = worker.device();
  AddRecv(&graph, "z", "z", d, worker.incarnation(), d, /*client_terminated=*/true);
  AddBinary(&graph, "w", "Mul", d, "y", "z");
  AddSend(&graph, "w_send", "w", "w", d, worker.incarnation(), d, /*client_terminated=*/true);
  return graph;
}

RunGraphRequest PartialRequest(const std::string& handle, int64_t step_id, bool last) {
  RunGraphRequest request = RunRequest(handle, step_id);
  request.set_is_partial(true);
  request.set_is_last_partial_run(last);
  return request;
}

TEST(WorkerPartialRunTest, FeedsAndFetchesOverCallsOfOneStep) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), TwoFeedGraph(worker), &handle).ok());
  for (int64_t step_id : {int64_t{11}, int64_t{12}}) {
    RunGraphRequest first = PartialRequest(handle, step_id, /*last=*/false);
    *first.add_send() = Named(ClientKey(worker, "x"), Scalar(step_id));
    first.add_recv_key(ClientKey(worker, "y"));
    RunGraphResponse response;
    Status status = worker.client()->RunGraph(first, &response, kCallTimeoutMs);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(response.recv_size(), 1);
    EXPECT_EQ(ScalarOf(response.recv(0).tensor()), step_id * 2.0f + 1);

    RunGraphRequest last = PartialRequest(handle, step_id, /*last=*/true);
    *last.add_send() = Named(ClientKey(worker, "z"), Scalar(10));
    last.add_recv_key(ClientKey(worker, "w"));
    status = worker.client()->RunGraph(last, &response, kCallTimeoutMs);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(response.recv_size(), 1);
    EXPECT_EQ(ScalarOf(response.recv(0).tensor()), (step_id * 2.0f + 1) * 10);
    CleanupGraphRequest cleanup;
    cleanup.set_step_id(step_id);
    CleanupGraphResponse cleaned;
    ASSERT_TRUE(worker.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs).ok());
  }
  EXPECT_EQ(worker.worker()->rendezvous_mgr()->size(), 0u);
}

TEST(WorkerPartialRunTest, KeysTheGraphDoesNotHaveAreRefused) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), TwoFeedGraph(worker), &handle).ok());
  RunGraphRequest request = PartialRequest(handle, 21, /*last=*/false);
  request.add_recv_key(ClientKey(worker, "nothing"));
  RunGraphResponse response;
  EXPECT_EQ(worker.client()->RunGraph(request, &response, kCallTimeoutMs).code(),
            Code::INVALID_ARGUMENT);
  request.clear_recv_key();
  *request.add_send() = Named(ClientKey(worker, "y"), Scalar(1));
  EXPECT_EQ(worker.client()->RunGraph(request, &response, kCallTimeoutMs).code(),
            Code::INVALID_ARGUMENT);
  // A partial call need not send every feed, unlike a whole step's.
  RunGraphRequest whole = RunRequest(handle, 22);
  *whole.add_send() = Named(ClientKey(worker, "x"), Scalar(1));
  EXPECT_EQ(worker.client()->RunGraph(whole, &response, kCallTimeoutMs).code(),
            Code::INVALID_ARGUMENT);
}

TEST(WorkerPartialRunTest, CleanupGraphEndsAWaitingPartialRun) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), TwoFeedGraph(worker), &handle).ok());
  RunGraphRequest first = PartialRequest(handle, 31, /*last=*/false);
  *first.add_send() = Named(ClientKey(worker, "x"), Scalar(1));
  RunGraphResponse response;
  ASSERT_TRUE(worker.client()->RunGraph(first, &response, kCallTimeoutMs).ok());

  // The last call waits for w, which needs z, which nobody sends.
  RunGraphRequest last = PartialRequest(handle, 31, /*last=*/true);
  last.add_recv_key(ClientKey(worker, "w"));
  Status waiting;
  std::thread call([&] { waiting = worker.client()->RunGraph(last, &response, kCallTimeoutMs); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CleanupGraphRequest cleanup;
  cleanup.set_step_id(31);
  CleanupGraphResponse cleaned;
  ASSERT_TRUE(worker.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs).ok());
  call.join();  // bounded by kCallTimeoutMs
  EXPECT_EQ(waiting.code(), Code::CANCELLED) << waiting;
}

TEST(WorkerPartialRunTest, DeletingTheSessionEndsItsPartialRuns) {
  TestWorker worker("worker", 0);
  ASSERT_TRUE(CreateSession(worker.client(), "s", false).ok());
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), TwoFeedGraph(worker), &handle, "s").ok());
  RunGraphRequest last = RunRequest(handle, 51, "s");
  last.set_is_partial(true);
  last.set_is_last_partial_run(true);
  *last.add_send() = Named(ClientKey(worker, "x"), Scalar(1));
  last.add_recv_key(ClientKey(worker, "w"));  // needs z, which nobody sends
  RunGraphResponse response;
  Status waiting;
  std::thread call([&] { waiting = worker.client()->RunGraph(last, &response, kCallTimeoutMs); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  DeleteWorkerSessionRequest request;
  request.set_session_handle("s");
  DeleteWorkerSessionResponse deleted;
  ASSERT_TRUE(worker.client()->DeleteWorkerSession(request, &deleted, kCallTimeoutMs).ok());
  call.join();  // bounded by kCallTimeoutMs
  EXPECT_EQ(waiting.code(), Code::CANCELLED) << waiting;
}

TEST(WorkerPartialRunTest, AFailingKernelReachesTheWaitingCall) {
  TestWorker worker("worker", 0);
  GraphDef graph;
  const std::string& d = worker.device();
  AddRecv(&graph, "x", "x", d, worker.incarnation(), d, /*client_terminated=*/true);
  AddConst(&graph, "bad", d, FloatTensor({1, 2, 3}, TensorShape({3})));
  AddBinary(&graph, "sum", "AddV2", d, "x", "bad");  // x of shape [2]: incompatible
  AddSend(&graph, "sum_send", "sum", "sum", d, worker.incarnation(), d,
          /*client_terminated=*/true);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), graph, &handle).ok());
  RunGraphRequest request = PartialRequest(handle, 41, /*last=*/true);
  *request.add_send() = Named(ClientKey(worker, "x"), FloatTensor({1, 2}, TensorShape({2})));
  request.add_recv_key(ClientKey(worker, "sum"));
  RunGraphResponse response;
  Status status = worker.client()->RunGraph(request, &response, kCallTimeoutMs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("sum"), std::string::npos) << status;
}

}  // namespace
}  // namespace tensorweave
