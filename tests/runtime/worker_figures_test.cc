// Figures for the worker protocol over loopback gRPC, printed (and recorded
// as test properties): the round trip of RunGraph on a tiny graph, and the
// throughput of RecvTensor for a 1 MiB tensor. The values are checked too,
// so a figure always measures a working path.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "tests/runtime/worker_test_util.h"

namespace tensorweave {
namespace {

using namespace worker_test;  // NOLINT: the helpers of these tests
using Clock = std::chrono::steady_clock;

double MicrosSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

TEST(WorkerFiguresTest, RunGraphRoundTripOfATinyGraph) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle).ok());
  constexpr int kWarmup = 20;
  constexpr int kRuns = 300;
  double total_us = 0;
  for (int i = 0; i < kWarmup + kRuns; ++i) {
    RunGraphRequest request = RunRequest(handle, i + 1);
    *request.add_send() = Named(ClientKey(worker, "x"), Scalar(i));
    request.add_recv_key(ClientKey(worker, "y"));
    RunGraphResponse response;
    const auto start = Clock::now();
    Status status = worker.client()->RunGraph(request, &response, kCallTimeoutMs);
    if (i >= kWarmup) total_us += MicrosSince(start);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(response.recv_size(), 1);
    ASSERT_EQ(ScalarOf(response.recv(0).tensor()), 2.0f * i + 1);
    CleanupGraphRequest cleanup;
    cleanup.set_step_id(i + 1);
    CleanupGraphResponse cleaned;
    ASSERT_TRUE(worker.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs).ok());
  }
  const double mean_us = total_us / kRuns;
  std::printf("[ figure ] RunGraph round trip (y = x*2+1, loopback): %.1f us\n", mean_us);
  RecordProperty("run_graph_round_trip_us", static_cast<int>(mean_us));
}

TEST(WorkerFiguresTest, RunGraphOfOneMebibyteEachWay) {
  // The tensors go out of their own buffers and come back straight into
  // tensors (tensor_coding.h), as a master's RunGraph to another task.
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle).ok());
  constexpr int64_t kFloats = (1 << 20) / sizeof(float);
  Tensor x(DT_FLOAT, TensorShape({1, kFloats}));
  for (int64_t i = 0; i < kFloats; ++i) x.data<float>()[i] = static_cast<float>(i % 977);
  constexpr int kWarmup = 10;
  constexpr int kRuns = 100;
  double total_us = 0;
  for (int i = 0; i < kWarmup + kRuns; ++i) {
    RunGraphInput input;
    input.request = RunRequest(handle, i + 1);
    input.sends.emplace_back(ClientKey(worker, "x"), x);
    input.request.add_recv_key(ClientKey(worker, "y"));
    RunGraphOutput output;
    const auto start = Clock::now();
    Status status = worker.client()->RunGraph(input, &output, kCallTimeoutMs);
    if (i >= kWarmup) total_us += MicrosSince(start);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(output.recvs.size(), 1u);
    ASSERT_EQ(output.recvs[0].second.NumElements(), kFloats);
    ASSERT_EQ(output.recvs[0].second.data<float>()[kFloats - 1], 2.0f * ((kFloats - 1) % 977) + 1);
    CleanupGraphRequest cleanup;
    cleanup.set_step_id(i + 1);
    CleanupGraphResponse cleaned;
    ASSERT_TRUE(worker.client()->CleanupGraph(cleanup, &cleaned, kCallTimeoutMs).ok());
  }
  const double mean_us = total_us / kRuns;
  const double megabytes_per_second = (1 << 20) / mean_us;
  std::printf("[ figure ] RunGraph 1 MiB each way (y = x*2+1, loopback): %.0f us, %.0f MB/s\n",
              mean_us, megabytes_per_second);
  RecordProperty("run_graph_1mib_each_way_mb_per_s", static_cast<int>(megabytes_per_second));
}

// Pulls a 1 MiB tensor `runs` times, through the TensorProto of the
// generated stub or straight into a Tensor; the mean time per pull in us.
double MeanRecvTensorMicros(const TestWorker& worker, bool into_tensor, int runs) {
  constexpr int64_t kFloats = (1 << 20) / sizeof(float);
  Tensor value(DT_FLOAT, TensorShape({kFloats}));
  for (int64_t i = 0; i < kFloats; ++i) value.data<float>()[i] = static_cast<float>(i % 977);
  const std::string key = Rendezvous::CreateKey(worker.device(), worker.incarnation(),
                                                "/job:peer/replica:0/task:0/device:CPU:0", "big");
  auto* receiver = dynamic_cast<TensorReceiverInterface*>(worker.client());
  EXPECT_NE(receiver, nullptr);
  constexpr int kWarmup = 5;
  double total_us = 0;
  for (int i = 0; i < kWarmup + runs; ++i) {
    const int64_t step_id = i + 1;
    EXPECT_TRUE(
        worker.worker()->rendezvous_mgr()->FindOrCreate(step_id)->Send(key, value, false).ok());
    RecvTensorRequest request;
    request.set_step_id(step_id);
    request.set_rendezvous_key(key);
    RecvTensorResponse response;
    Tensor received;
    bool is_dead = false;
    const auto start = Clock::now();
    Status status = CallAndWait([&](CallOptions* call, WorkerInterface::StatusCallback done) {
      if (into_tensor) {
        receiver->RecvTensorValueAsync(call, &request, &received, &is_dead, std::move(done));
      } else {
        worker.client()->RecvTensorAsync(call, &request, &response, std::move(done));
      }
    });
    if (status.ok() && !into_tensor) status = Tensor::FromProto(response.tensor(), &received);
    if (i >= kWarmup) total_us += MicrosSince(start);
    EXPECT_TRUE(status.ok()) << status;
    if (!status.ok()) return -1;
    EXPECT_EQ(received.NumElements(), kFloats);
    EXPECT_EQ(received.data<float>()[kFloats - 1], value.data<float>()[kFloats - 1]);
    worker.worker()->rendezvous_mgr()->Cleanup(step_id);
  }
  return total_us / runs;
}

TEST(WorkerFiguresTest, RecvTensorOfOneMebibyte) {
  TestWorker worker("worker", 0);
  constexpr int kRuns = 60;
  for (bool into_tensor : {false, true}) {
    const double mean_us = MeanRecvTensorMicros(worker, into_tensor, kRuns);
    ASSERT_GT(mean_us, 0);
    const double megabytes_per_second = (1 << 20) / mean_us;  // bytes/us = MB/s
    std::printf("[ figure ] RecvTensor 1 MiB (loopback, %s): %.0f us, %.0f MB/s\n",
                into_tensor ? "straight into a Tensor" : "through a TensorProto", mean_us,
                megabytes_per_second);
    RecordProperty(into_tensor ? "recv_tensor_1mib_into_tensor_mb_per_s"
                               : "recv_tensor_1mib_through_proto_mb_per_s",
                   static_cast<int>(megabytes_per_second));
  }
}

}  // namespace
}  // namespace tensorweave
