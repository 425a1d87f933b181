// RegisterGraph, RunGraph and RecvTensor over gRPC on loopback: one worker
// fed and fetched by rendezvous keys, a graph cut across two workers whose
// value crosses by RecvTensor, variables shared across steps and sessions
// (or kept apart), cleanup, and cancellation of a step in flight.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/runtime/worker_test_util.h"

namespace tensorweave {
namespace {

using namespace worker_test;  // NOLINT: the helpers of these tests
using std::chrono::milliseconds;
using std::chrono::steady_clock;

TEST(WorkerRunGraphTest, RunGraphFeedsAndFetchesByRendezvousKey) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle).ok());
  EXPECT_FALSE(handle.empty());
  for (int step = 1; step <= 3; ++step) {
    RunGraphRequest request = RunRequest(handle, step);
    *request.add_send() = Named(ClientKey(worker, "x"), Scalar(step * 10.0f));
    request.add_recv_key(ClientKey(worker, "y"));
    RunGraphResponse response;
    Status status = worker.client()->RunGraph(request, &response, kCallTimeoutMs);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(response.recv_size(), 1);
    EXPECT_EQ(response.recv(0).name(), ClientKey(worker, "y"));
    EXPECT_EQ(ScalarOf(response.recv(0).tensor()), step * 20.0f + 1);
  }
}

TEST(WorkerRunGraphTest, GraphAcrossTwoDevicesOfOneWorker) {
  TestWorker worker("worker", 0, /*cpus=*/2);
  GraphDef graph = AffineGraph(worker);
  // The multiplication moves to CPU:1: local _Send/_Recv pairs connect it.
  for (NodeDef& node : *graph.mutable_node()) {
    if (node.name() == "mul" || node.name() == "two") node.set_device(worker.device(1));
  }
  std::string handle;
  Status status = Register(worker.client(), graph, &handle);
  ASSERT_TRUE(status.ok()) << status;
  RunGraphRequest request = RunRequest(handle, 1);
  *request.add_send() = Named(ClientKey(worker, "x"), Scalar(4));
  request.add_recv_key(ClientKey(worker, "y"));
  RunGraphResponse response;
  status = worker.client()->RunGraph(request, &response, kCallTimeoutMs);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(response.recv_size(), 1);
  EXPECT_EQ(ScalarOf(response.recv(0).tensor()), 9.0f);
}

// Worker A computes c = 5 * 3 and sends it to worker B, which returns c + 1
// to the client. The cut edge is a _Send on A and a _Recv on B with A's
// device and incarnation in the key.
struct CrossWorkerGraphs {
  GraphDef on_a;
  GraphDef on_b;
};

CrossWorkerGraphs CrossGraphs(const TestWorker& a, const TestWorker& b) {
  CrossWorkerGraphs graphs;
  AddConst(&graphs.on_a, "five", a.device(), Scalar(5));
  AddConst(&graphs.on_a, "three", a.device(), Scalar(3));
  AddBinary(&graphs.on_a, "c", "Mul", a.device(), "five", "three");
  AddSend(&graphs.on_a, "c_send", "c", "edge_c", a.device(), a.incarnation(), b.device(),
          /*client_terminated=*/false);
  AddRecv(&graphs.on_b, "c_recv", "edge_c", a.device(), a.incarnation(), b.device(),
          /*client_terminated=*/false);
  AddConst(&graphs.on_b, "one", b.device(), Scalar(1));
  AddBinary(&graphs.on_b, "d", "AddV2", b.device(), "c_recv", "one");
  AddSend(&graphs.on_b, "d_send", "d", "d", b.device(), b.incarnation(), b.device(),
          /*client_terminated=*/true);
  return graphs;
}

TEST(WorkerRunGraphTest, AValueCrossesBetweenTwoWorkersByRecvTensor) {
  TestWorker a("ps", 0);
  TestWorker b("worker", 0);
  const ClusterDef cluster = ClusterOf({{"ps", &a}, {"worker", &b}});
  ASSERT_TRUE(CreateSession(a.client(), "s", false, cluster).ok());
  ASSERT_TRUE(CreateSession(b.client(), "s", false, cluster).ok());
  CrossWorkerGraphs graphs = CrossGraphs(a, b);
  std::string handle_a, handle_b;
  ASSERT_TRUE(Register(a.client(), graphs.on_a, &handle_a, "s").ok());
  Status status = Register(b.client(), graphs.on_b, &handle_b, "s");
  ASSERT_TRUE(status.ok()) << status;

  for (int64_t step_id : {int64_t{101}, int64_t{102}}) {
    // B first: its _Recv asks A before A's step even started.
    RunGraphRequest run_b = RunRequest(handle_b, step_id, "s");
    run_b.add_recv_key(ClientKey(b, "d"));
    RunGraphResponse response_b;
    Status status_b;
    std::thread run_on_b(
        [&] { status_b = b.client()->RunGraph(run_b, &response_b, kCallTimeoutMs); });
    if (step_id == 101) std::this_thread::sleep_for(milliseconds(50));
    RunGraphResponse response_a;
    Status status_a =
        a.client()->RunGraph(RunRequest(handle_a, step_id, "s"), &response_a, kCallTimeoutMs);
    run_on_b.join();
    ASSERT_TRUE(status_a.ok()) << status_a;
    ASSERT_TRUE(status_b.ok()) << status_b;
    ASSERT_EQ(response_b.recv_size(), 1);
    EXPECT_EQ(ScalarOf(response_b.recv(0).tensor()), 16.0f);

    CleanupGraphRequest cleanup;
    cleanup.set_step_id(step_id);
    CleanupGraphResponse cleaned;
    EXPECT_TRUE(a.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs).ok());
    EXPECT_TRUE(b.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs).ok());
    EXPECT_EQ(a.worker()->rendezvous_mgr()->size(), 0u);
    EXPECT_EQ(b.worker()->rendezvous_mgr()->size(), 0u);
  }
}

TEST(WorkerRunGraphTest, ManyStepsAtOnceAcrossTwoWorkers) {
  TestWorker a("ps", 0);
  TestWorker b("worker", 0);
  const ClusterDef cluster = ClusterOf({{"ps", &a}, {"worker", &b}});
  ASSERT_TRUE(CreateSession(a.client(), "s", false, cluster).ok());
  ASSERT_TRUE(CreateSession(b.client(), "s", false, cluster).ok());
  CrossWorkerGraphs graphs = CrossGraphs(a, b);
  std::string handle_a, handle_b;
  ASSERT_TRUE(Register(a.client(), graphs.on_a, &handle_a, "s").ok());
  ASSERT_TRUE(Register(b.client(), graphs.on_b, &handle_b, "s").ok());
  constexpr int kThreads = 6;
  constexpr int kStepsPerThread = 8;
  std::vector<std::thread> threads;
  std::atomic<int> good_steps{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kStepsPerThread; ++i) {
        const int64_t step_id = 5000 + t * 100 + i;
        RunGraphInput run_b, run_a;
        run_b.request = RunRequest(handle_b, step_id, "s");
        run_b.request.add_recv_key(ClientKey(b, "d"));
        RunGraphOutput response_a, response_b;
        CallOptions call_a, call_b;
        call_a.SetTimeout(kCallTimeoutMs);
        call_b.SetTimeout(kCallTimeoutMs);
        run_a.request = RunRequest(handle_a, step_id, "s");
        // Both partitions at once, as a master starts them.
        std::mutex mu;
        std::condition_variable cv;
        int pending = 2;
        Status status_a, status_b;
        auto finished = [&](Status* into) {
          return [&, into](const Status& status) {
            std::lock_guard<std::mutex> lock(mu);
            *into = status;
            if (--pending == 0) cv.notify_all();
          };
        };
        b.client()->RunGraphAsync(&call_b, &run_b, &response_b, finished(&status_b));
        a.client()->RunGraphAsync(&call_a, &run_a, &response_a, finished(&status_a));
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return pending == 0; });  // bounded by the calls' timeouts
        }
        if (status_a.ok() && status_b.ok() && response_b.recvs.size() == 1 &&
            response_b.recvs[0].first == ClientKey(b, "d") &&
            response_b.recvs[0].second.data<float>()[0] == 16.0f) {
          ++good_steps;
        }
        CleanupGraphRequest cleanup;
        cleanup.set_step_id(step_id);
        CleanupGraphResponse cleaned;
        a.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs);
        b.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(good_steps.load(), kThreads * kStepsPerThread);
  EXPECT_EQ(a.worker()->rendezvous_mgr()->size(), 0u);
  EXPECT_EQ(b.worker()->rendezvous_mgr()->size(), 0u);
}

TEST(WorkerRunGraphTest, AWorkerCalledDirectlyWithoutCallOptions) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle).ok());
  for (bool caller_waits : {false, true}) {
    RunGraphInput input;
    input.request = RunRequest(handle, caller_waits ? 2 : 1);
    input.sends.emplace_back(ClientKey(worker, "x"), Scalar(5));
    input.request.add_recv_key(ClientKey(worker, "y"));
    input.caller_waits = caller_waits;
    RunGraphOutput output;
    Status status = CallAndWait([&](CallOptions*, WorkerInterface::StatusCallback done) {
      worker.worker()->RunGraphAsync(nullptr, &input, &output, std::move(done));
    });
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(output.recvs.size(), 1u);
    EXPECT_EQ(output.recvs[0].second.data<float>()[0], 11.0f);
  }
}

TEST(WorkerRunGraphTest, ACallerThatWaitsRunsTheLastExecutorOnItsOwnThread) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle).ok());
  for (bool caller_waits : {false, true}) {
    RunGraphInput input;
    input.request = RunRequest(handle, caller_waits ? 4 : 3);
    input.sends.emplace_back(ClientKey(worker, "x"), Scalar(5));
    input.request.add_recv_key(ClientKey(worker, "y"));
    input.caller_waits = caller_waits;
    RunGraphOutput output;
    std::mutex mu;
    std::condition_variable finished;
    std::thread::id done_on;  // guarded by mu
    Status status;            // guarded by mu
    worker.worker()->RunGraphAsync(nullptr, &input, &output, [&](const Status& s) {
      std::lock_guard<std::mutex> lock(mu);
      done_on = std::this_thread::get_id();
      status = s;
      finished.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    if (caller_waits) {
      // Every kernel of this graph runs inline: the step is over on return.
      EXPECT_EQ(done_on, std::this_thread::get_id());
    } else {
      // Started on the pool: it finishes there.
      ASSERT_TRUE(finished.wait_for(lock, std::chrono::seconds(10),
                                    [&] { return done_on != std::thread::id(); }));
      EXPECT_NE(done_on, std::this_thread::get_id());
    }
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(WorkerRunGraphTest, AStepRunOnTheCallersThreadStillEndsAtItsTimeout) {
  // A long chain of kernels, all inline on the caller's thread: nobody else
  // can cancel them when the caller's time is up, so the step stops itself.
  TestWorker worker("worker", 0);
  GraphDef graph;
  const std::string& d = worker.device();
  AddRecv(&graph, "x", "x", d, worker.incarnation(), d, /*client_terminated=*/true);
  AddConst(&graph, "two", d, Scalar(2));
  std::string last = "x";
  constexpr int kChain = 4000;
  for (int i = 0; i < kChain; ++i) {
    const std::string name = StrCat("m", i);
    AddBinary(&graph, name, "Mul", d, last, "two");
    last = name;
  }
  AddSend(&graph, "y_send", last, "y", d, worker.incarnation(), d, /*client_terminated=*/true);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), graph, &handle).ok());
  RunGraphInput input;
  input.request = RunRequest(handle, 9);
  input.sends.emplace_back(ClientKey(worker, "x"), Tensor(DT_FLOAT, TensorShape({1 << 20})));
  input.request.add_recv_key(ClientKey(worker, "y"));
  input.caller_waits = true;
  RunGraphOutput output;
  CallOptions call;
  const auto start = steady_clock::now();
  Status status = CallAndWait(
      [&](CallOptions* options, WorkerInterface::StatusCallback done) {
        worker.worker()->RunGraphAsync(options, &input, &output, std::move(done));
      },
      /*timeout_ms=*/200, &call);
  // 4000 multiplications of 4 MiB take seconds.
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_LT(steady_clock::now() - start, std::chrono::milliseconds(1500));
}

TEST(WorkerRunGraphTest, AFailingStepWakesItsRemoteReceiverWithTheError) {
  TestWorker a("ps", 0);
  TestWorker b("worker", 0);
  const ClusterDef cluster = ClusterOf({{"ps", &a}, {"worker", &b}});
  ASSERT_TRUE(CreateSession(a.client(), "s", false, cluster).ok());
  ASSERT_TRUE(CreateSession(b.client(), "s", false, cluster).ok());
  CrossWorkerGraphs graphs = CrossGraphs(a, b);
  // On A, c now reads a variable nobody initialized: A's step fails.
  GraphDef on_a;
  NodeDef* variable = AddNode(&on_a, "v", "VariableV2", a.device());
  Attr(variable, "dtype", DT_FLOAT);
  Attr(variable, "shape", TensorShape({}));
  Attr(AddNode(&on_a, "c", "Identity", a.device(), {"v"}), "T", DT_FLOAT);
  AddSend(&on_a, "c_send", "c", "edge_c", a.device(), a.incarnation(), b.device(), false);
  std::string handle_a, handle_b;
  Status status = Register(a.client(), on_a, &handle_a, "s");
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(Register(b.client(), graphs.on_b, &handle_b, "s").ok());

  RunGraphRequest run_b = RunRequest(handle_b, 7, "s");
  run_b.add_recv_key(ClientKey(b, "d"));
  RunGraphResponse response_b;
  Status status_b;
  std::thread run_on_b(
      [&] { status_b = b.client()->RunGraph(run_b, &response_b, kCallTimeoutMs); });
  std::this_thread::sleep_for(milliseconds(50));
  RunGraphResponse response_a;
  const auto start = steady_clock::now();
  Status status_a = a.client()->RunGraph(RunRequest(handle_a, 7, "s"), &response_a, kCallTimeoutMs);
  run_on_b.join();
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status_a.code(), Code::FAILED_PRECONDITION) << status_a;
  // B's receiver got A's error through RecvTensor, not a timeout.
  EXPECT_EQ(status_b.code(), Code::FAILED_PRECONDITION) << status_b;
  EXPECT_EQ(response_b.recv_size(), 0);
}

TEST(WorkerRunGraphTest, RecvTensorChecksTheSendersIncarnation) {
  TestWorker worker("worker", 0);
  const std::string key = Rendezvous::CreateKey(worker.device(), worker.incarnation(),
                                                "/job:other/replica:0/task:0/device:CPU:0", "t");
  ASSERT_TRUE(
      worker.worker()->rendezvous_mgr()->FindOrCreate(3)->Send(key, Scalar(42), false).ok());
  RecvTensorResponse response;
  const std::string stale = Rendezvous::CreateKey(worker.device(), worker.incarnation() + 1,
                                                  "/job:other/replica:0/task:0/device:CPU:0", "t");
  Status status = RecvTensor(worker.client(), 3, stale, &response);
  EXPECT_EQ(status.code(), Code::ABORTED) << status;
  EXPECT_NE(status.message().find("incarnation"), std::string::npos) << status;

  status = RecvTensor(worker.client(), 3, key, &response);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ScalarOf(response.tensor()), 42.0f);
}

TEST(WorkerRunGraphTest, CleanupGraphWakesAWaitingRecvTensorAndDropsTheStep) {
  TestWorker worker("worker", 0);
  const std::string key = Rendezvous::CreateKey(worker.device(), worker.incarnation(),
                                                "/job:other/replica:0/task:0/device:CPU:0", "t");
  RecvTensorResponse response;
  Status status;
  std::thread waiting([&] { status = RecvTensor(worker.client(), 9, key, &response); });
  const auto start = steady_clock::now();
  while (worker.worker()->rendezvous_mgr()->Find(9) == nullptr &&
         steady_clock::now() - start < std::chrono::seconds(5)) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  std::this_thread::sleep_for(milliseconds(20));
  CleanupGraphRequest cleanup;
  cleanup.set_step_id(9);
  CleanupGraphResponse cleaned;
  EXPECT_TRUE(worker.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs).ok());
  waiting.join();
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
  EXPECT_EQ(worker.worker()->rendezvous_mgr()->size(), 0u);
}

TEST(WorkerRunGraphTest, DeregisteredGraphCannotRun) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle).ok());
  DeregisterGraphRequest deregister;
  deregister.set_graph_handle(handle);
  DeregisterGraphResponse deregistered;
  ASSERT_TRUE(worker.client()->DeregisterGraph(deregister, &deregistered, kCallTimeoutMs).ok());
  RunGraphRequest request = RunRequest(handle, 1);
  *request.add_send() = Named(ClientKey(worker, "x"), Scalar(1));
  RunGraphResponse response;
  Status status = worker.client()->RunGraph(request, &response, kCallTimeoutMs);
  EXPECT_EQ(status.code(), Code::ABORTED) << status;
  EXPECT_NE(status.message().find(handle), std::string::npos) << status;
  // A second deregistration finds nothing.
  status = worker.client()->DeregisterGraph(deregister, &deregistered, kCallTimeoutMs);
  EXPECT_EQ(status.code(), Code::ABORTED) << status;
}

// A graph whose _Recv waits for a value nobody sends: its step only ends
// when cancelled.
GraphDef NeverEndingGraph(const TestWorker& worker) {
  GraphDef graph;
  const std::string& d = worker.device();
  AddRecv(&graph, "never", "never_sent", d, worker.incarnation(), d, false);
  AddSend(&graph, "out", "never", "out", d, worker.incarnation(), d, true);
  return graph;
}

TEST(WorkerRunGraphTest, CancellingRunGraphCancelsTheStepPromptly) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), NeverEndingGraph(worker), &handle).ok());
  RunGraphInput request;
  request.request = RunRequest(handle, 5);
  request.request.add_recv_key(ClientKey(worker, "out"));
  RunGraphOutput response;
  CallOptions call;
  std::thread canceller([&] {
    std::this_thread::sleep_for(milliseconds(200));
    call.StartCancel();
  });
  const auto start = steady_clock::now();
  Status status = CallAndWait(
      [&](CallOptions* options, WorkerInterface::StatusCallback done) {
        worker.client()->RunGraphAsync(options, &request, &response, std::move(done));
      },
      kCallTimeoutMs, &call);
  canceller.join();
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(3));

  // The worker cancelled its step too: its rendezvous was aborted, so a
  // receiver of the step is told at once.
  const auto aborted_by = steady_clock::now() + std::chrono::seconds(5);
  std::shared_ptr<RemoteRendezvous> rendezvous;
  Status recv_status;
  while (steady_clock::now() < aborted_by) {
    rendezvous = worker.worker()->rendezvous_mgr()->Find(5);
    ASSERT_NE(rendezvous, nullptr);
    bool called = false;
    rendezvous->RecvLocalAsync(ClientKey(worker, "other"),
                               [&](const Status& s, const Tensor&, bool) {
                                 called = true;
                                 recv_status = s;
                               });
    if (called) break;
    rendezvous->CancelLocalRecv(ClientKey(worker, "other"), errors::Cancelled("retry"));
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(recv_status.code(), Code::CANCELLED) << recv_status;
  EXPECT_NE(recv_status.message().find("RunGraph was cancelled"), std::string::npos) << recv_status;
}

TEST(WorkerRunGraphTest, ARunGraphPastItsDeadlineEndsAndCancelsTheStep) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), NeverEndingGraph(worker), &handle).ok());
  RunGraphRequest request = RunRequest(handle, 6);
  RunGraphResponse response;
  const auto start = steady_clock::now();
  Status status = worker.client()->RunGraph(request, &response, /*timeout_ms=*/300);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(3));
  // Stopping the server does not wait for the abandoned step: it is gone.
  const auto stop_start = steady_clock::now();
  worker.Stop();
  EXPECT_LT(steady_clock::now() - stop_start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace tensorweave
