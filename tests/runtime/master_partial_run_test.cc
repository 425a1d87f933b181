// The master's side of partial runs against fake workers: which RunGraph
// calls each RunStep with a partial_run_handle sends (is_partial on every
// partition first, then only the client task's, is_last_partial_run on
// every partition at the end, all with one step id), the errors a call is
// refused with before anything is sent, and how a failed call, the last
// call and Close end the step on the workers (CleanupGraph).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "tests/runtime/master_test_fakes.h"

namespace tensorweave {
namespace {

using namespace master_test;  // NOLINT: the fakes and fixture of these tests

class MasterPartialRunTest : public MasterSessionTest {
 protected:
  std::string Setup(const std::string& session, const std::vector<std::string>& feeds,
                    const std::vector<std::string>& fetches) {
    PartialRunSetupRequest request;
    request.set_session_handle(session);
    for (const std::string& feed : feeds) request.add_feed(feed);
    for (const std::string& fetch : fetches) request.add_fetch(fetch);
    PartialRunSetupResponse response;
    Status status = master_->PartialRunSetup(request, &response);
    EXPECT_TRUE(status.ok()) << status;
    return response.partial_run_handle();
  }

  Status PRun(const std::string& session, const std::string& handle,
              const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
              NamedTensors* fetched) {
    RunStepRequest request;
    request.set_session_handle(session);
    request.set_partial_run_handle(handle);
    for (const std::string& fetch : fetches) request.add_fetch(fetch);
    NamedTensors values;
    for (const std::string& feed : feeds) values.emplace_back(feed, FloatScalar(3.0f));
    RunStepResponse response;
    return master_->RunStep(request, values, &response, fetched);
  }

  // Waits (bounded) until `worker` cleaned up `count` steps.
  static void WaitForCleanups(FakeWorker* worker, size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(worker->mu());
        if (worker->cleaned_steps.size() >= count) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "no CleanupGraph within 10 s";
  }
};

TEST_F(MasterPartialRunTest, FirstCallStartsEveryPartitionLastEndsThemAll) {
  const std::string session = CreateSession(SplitGraph());
  const std::string handle = Setup(session, {"x"}, {"ps_part:0", "y"});
  EXPECT_EQ(handle, "0");
  EXPECT_EQ(Setup(session, {"x"}, {"ps_part:0", "y"}), "1");  // unique per session
  FakeWorker* worker0 = cluster_.worker(kWorker0);
  FakeWorker* ps0 = cluster_.worker(kPs0);
  // Registered once, as for Run (both setups share the signature).
  EXPECT_EQ(worker0->registered.size(), 1u);
  EXPECT_EQ(ps0->registered.size(), 1u);
  EXPECT_TRUE(worker0->runs.empty());  // setup runs nothing

  NamedTensors fetched;
  ASSERT_TRUE(PRun(session, handle, {"x:0"}, {}, &fetched).ok());
  ASSERT_EQ(worker0->runs.size(), 1u);
  ASSERT_EQ(ps0->runs.size(), 1u);
  const int64_t step_id = worker0->runs[0].step_id();
  EXPECT_GT(step_id, 0);
  EXPECT_EQ(ps0->runs[0].step_id(), step_id);
  for (const RunGraphRequest* run : {&worker0->runs[0], &ps0->runs[0]}) {
    EXPECT_TRUE(run->is_partial());
    EXPECT_FALSE(run->is_last_partial_run());
  }
  EXPECT_EQ(worker0->runs[0].send_size(), 1);  // x is fed on the client's task
  EXPECT_EQ(ps0->runs[0].send_size(), 0);

  // A call between the first and the last reaches the client's task only.
  ASSERT_TRUE(PRun(session, handle, {}, {"ps_part:0"}, &fetched).ok());
  ASSERT_EQ(fetched.size(), 1u);
  EXPECT_EQ(fetched[0].first, "ps_part:0");
  EXPECT_EQ(ps0->runs.size(), 1u);
  ASSERT_EQ(worker0->runs.size(), 2u);
  EXPECT_EQ(worker0->runs[1].recv_key_size(), 1);
  EXPECT_FALSE(worker0->runs[1].is_last_partial_run());

  ASSERT_TRUE(PRun(session, handle, {}, {"y"}, &fetched).ok());
  ASSERT_EQ(worker0->runs.size(), 3u);
  ASSERT_EQ(ps0->runs.size(), 2u);
  for (const RunGraphRequest* run : {&worker0->runs[2], &ps0->runs[1]}) {
    EXPECT_TRUE(run->is_partial());
    EXPECT_TRUE(run->is_last_partial_run());
    EXPECT_EQ(run->step_id(), step_id);
  }
  WaitForCleanups(worker0, 1);
  WaitForCleanups(ps0, 1);
  EXPECT_EQ(worker0->cleaned_steps[0], step_id);
  // The handle ended with its last call.
  EXPECT_EQ(PRun(session, handle, {}, {"y"}, &fetched).code(), Code::INVALID_ARGUMENT);
}

TEST_F(MasterPartialRunTest, RefusedCallsSendNothing) {
  const std::string session = CreateSession(SplitGraph());
  const std::string handle = Setup(session, {"x"}, {"ps_part:0", "y"});
  NamedTensors fetched;
  const auto expect_refused = [&](const std::vector<std::string>& feeds,
                                  const std::vector<std::string>& fetches, const char* words) {
    Status status = PRun(session, handle, feeds, fetches, &fetched);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
    EXPECT_NE(status.message().find(words), std::string::npos) << status;
  };
  expect_refused({}, {"ps_part:1"}, "was not specified in partial_run_setup");
  expect_refused({"ps_part"}, {}, "was not specified in partial_run_setup");
  expect_refused({}, {"y", "y:0"}, "has already been fetched");
  expect_refused({}, {"y"}, "can't be computed from the feeds");
  expect_refused({"x:0", "x"}, {}, "has already been fed");
  EXPECT_EQ(PRun(session, "7", {"x"}, {}, &fetched).code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(cluster_.worker(kWorker0)->runs.empty());

  // Fed once, x cannot be fed again.
  ASSERT_TRUE(PRun(session, handle, {"x"}, {"y"}, &fetched).ok());
  expect_refused({"x"}, {}, "has already been fed");
  ASSERT_TRUE(PRun(session, handle, {}, {"ps_part"}, &fetched).ok());
}

TEST_F(MasterPartialRunTest, AFailedCallEndsTheStepEverywhere) {
  const std::string session = CreateSession(SplitGraph());
  const std::string handle = Setup(session, {"x"}, {"ps_part:0", "y"});
  FakeWorker* ps0 = cluster_.worker(kPs0);
  ps0->run_graph = [](CallOptions*, const RunGraphInput*, RunGraphOutput*,
                      WorkerInterface::StatusCallback done) {
    done(errors::InvalidArgument("ps_part failed"));
  };
  NamedTensors fetched;
  Status status = PRun(session, handle, {"x"}, {"ps_part:0"}, &fetched);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("ps_part failed"), std::string::npos) << status;
  WaitForCleanups(cluster_.worker(kWorker0), 1);
  WaitForCleanups(ps0, 1);
  status = PRun(session, handle, {}, {"y"}, &fetched);
  EXPECT_NE(status.message().find("Must run 'setup'"), std::string::npos) << status;
}

TEST_F(MasterPartialRunTest, ACallPastItsTimeoutEndsTheStep) {
  const std::string session = CreateSession(SplitGraph());
  const std::string handle = Setup(session, {"x"}, {"ps_part:0", "y"});
  // The client's partition waits for a value that never comes, until cancelled.
  cluster_.worker(kWorker0)->run_graph = [](CallOptions* call, const RunGraphInput*,
                                            RunGraphOutput*, WorkerInterface::StatusCallback done) {
    call->SetCancelCallback([done] { done(errors::Cancelled("RunGraph was cancelled")); });
  };
  RunStepRequest request;
  request.set_session_handle(session);
  request.set_partial_run_handle(handle);
  request.add_fetch("ps_part:0");
  request.mutable_options()->set_timeout_in_ms(100);
  RunStepResponse response;
  NamedTensors fetched;
  Status status = master_->RunStep(request, {{"x", FloatScalar(1.0f)}}, &response, &fetched);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_EQ(status.message(), "Timed out after 100 ms");
  WaitForCleanups(cluster_.worker(kWorker0), 1);
  WaitForCleanups(cluster_.worker(kPs0), 1);
  EXPECT_EQ(PRun(session, handle, {}, {"y"}, &fetched).code(), Code::INVALID_ARGUMENT);
}

TEST_F(MasterPartialRunTest, CloseEndsOpenPartialRuns) {
  const std::string session = CreateSession(SplitGraph());
  const std::string started = Setup(session, {"x"}, {"ps_part:0", "y"});
  Setup(session, {"x"}, {"y"});  // never called: nothing to end on a worker
  NamedTensors fetched;
  ASSERT_TRUE(PRun(session, started, {"x"}, {}, &fetched).ok());
  const int64_t step_id = cluster_.worker(kWorker0)->runs[0].step_id();
  CloseSessionRequest close;
  close.set_session_handle(session);
  CloseSessionResponse closed;
  ASSERT_TRUE(master_->CloseSession(close, &closed).ok());
  for (const char* task : {kWorker0, kPs0}) {
    FakeWorker* worker = cluster_.worker(task);
    // Close waits for its cleanups: no polling needed.
    std::lock_guard<std::mutex> lock(worker->mu());
    EXPECT_NE(std::find(worker->cleaned_steps.begin(), worker->cleaned_steps.end(), step_id),
              worker->cleaned_steps.end())
        << task;
  }
}

}  // namespace
}  // namespace tensorweave
