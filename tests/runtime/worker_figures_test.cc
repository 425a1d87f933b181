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

TEST(WorkerFiguresTest, RecvTensorOfOneMebibyte) {
  TestWorker worker("worker", 0);
  constexpr int64_t kFloats = (1 << 20) / sizeof(float);
  Tensor value(DT_FLOAT, TensorShape({kFloats}));
  for (int64_t i = 0; i < kFloats; ++i) value.data<float>()[i] = static_cast<float>(i % 977);
  const std::string key = Rendezvous::CreateKey(worker.device(), worker.incarnation(),
                                                "/job:peer/replica:0/task:0/device:CPU:0", "big");
  constexpr int kWarmup = 5;
  constexpr int kRuns = 60;
  double total_us = 0;
  for (int i = 0; i < kWarmup + kRuns; ++i) {
    const int64_t step_id = i + 1;
    ASSERT_TRUE(worker.worker()->rendezvous_mgr()->FindOrCreate(step_id)->Send(key, value).ok());
    RecvTensorResponse response;
    const auto start = Clock::now();
    Status status = RecvTensor(worker.client(), step_id, key, &response);
    Tensor received;
    if (status.ok()) status = Tensor::FromProto(response.tensor(), &received);
    if (i >= kWarmup) total_us += MicrosSince(start);
    ASSERT_TRUE(status.ok()) << status;
    ASSERT_EQ(received.NumElements(), kFloats);
    ASSERT_EQ(received.data<float>()[kFloats - 1], value.data<float>()[kFloats - 1]);
    worker.worker()->rendezvous_mgr()->Cleanup(step_id);
  }
  const double mean_us = total_us / kRuns;
  const double megabytes_per_second = (1 << 20) / mean_us;  // bytes/us = MB/s
  std::printf("[ figure ] RecvTensor 1 MiB (loopback, into a Tensor): %.0f us, %.0f MB/s\n",
              mean_us, megabytes_per_second);
  RecordProperty("recv_tensor_1mib_mb_per_s", static_cast<int>(megabytes_per_second));
}

}  // namespace
}  // namespace tensorweave
