// The master's own logic against fake workers that record what they are
// asked and answer with canned values: how a signature is partitioned per
// task (client-terminated feeds and fetches on the client device, cut edges
// keyed with the sending device's incarnation), caching, graph versions,
// closing, device discovery and what a failing partition does to a step.
// No graph runs here; master_grpc_test.cc runs them on real workers.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "runtime/common_runtime/subgraph.h"
#include "runtime/distributed/master.h"
#include "runtime/framework/rendezvous.h"
#include "tests/runtime/master_test_fakes.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using namespace master_test;  // NOLINT: the fakes and fixture of these tests
using session_test::AddAffine;
using session_test::AddNode;
using session_test::AddPlaceholder;
using session_test::FloatScalar;
using session_test::SetAttr;

const NodeDef* FindNodeDef(const GraphDef& graph, const std::string& name) {
  for (const NodeDef& node : graph.node()) {
    if (node.name() == name) return &node;
  }
  return nullptr;
}

std::vector<const NodeDef*> NodesWithOp(const GraphDef& graph, const std::string& op) {
  std::vector<const NodeDef*> nodes;
  for (const NodeDef& node : graph.node()) {
    if (node.op() == op) nodes.push_back(&node);
  }
  return nodes;
}

std::string StringAttr(const NodeDef& node, const std::string& name) {
  return node.attr().at(name).s();
}

TEST_F(MasterSessionTest, PartitionsPerTaskWithClientTerminatedFeedsAndFetches) {
  const std::string handle = CreateSession(SplitGraph());
  RunStepResponse response;
  Status status = Run(handle, {"y"}, &response);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(response.tensor_size(), 1);
  EXPECT_EQ(response.tensor(0).name(), "y");  // as the client spelled it
  Tensor fetched;
  ASSERT_TRUE(Tensor::FromProto(response.tensor(0).tensor(), &fetched).ok());
  EXPECT_EQ(session_test::Values(fetched), std::vector<float>{7.0f});

  FakeWorker* worker0 = cluster_.worker(kWorker0);
  FakeWorker* ps0 = cluster_.worker(kPs0);
  FakeWorker* worker1 = cluster_.worker(kWorker1);
  // One partition per task used; the unused task is not even given a session.
  ASSERT_EQ(worker0->registered.size(), 1u);
  ASSERT_EQ(ps0->registered.size(), 1u);
  EXPECT_TRUE(worker1->registered.empty());
  EXPECT_TRUE(worker1->create_sessions.empty());
  for (FakeWorker* worker : {worker0, ps0}) {
    ASSERT_EQ(worker->create_sessions.size(), 1u);
    EXPECT_EQ(worker->create_sessions[0].session_handle(), handle);
    EXPECT_EQ(worker->create_sessions[0].master_task(), kWorker0);
    EXPECT_EQ(worker->registered.begin()->second.session_handle(), handle);
    EXPECT_TRUE(worker->registered.begin()->second.create_worker_session_called());
  }
  EXPECT_GT(worker0->create_sessions[0].master_incarnation(), 0);
  EXPECT_EQ(worker0->create_sessions[0].master_incarnation(),
            ps0->create_sessions[0].master_incarnation());
  EXPECT_EQ(worker0->create_sessions[0].server_def().job_name(), "worker");
  EXPECT_EQ(worker0->create_sessions[0].server_def().task_index(), 0);
  EXPECT_EQ(ps0->create_sessions[0].server_def().job_name(), "ps");
  EXPECT_EQ(ps0->create_sessions[0].server_def().cluster().job_size(), 2);

  // Feed and fetch: client-terminated, on the client device, as TF's subgraph.cc.
  const std::string client = Cpu0(kWorker0);
  const GraphDef& client_graph = worker0->registered.begin()->second.graph_def();
  const NodeDef* recv_x = FindNodeDef(client_graph, "_recv_x_0");
  const NodeDef* send_y = FindNodeDef(client_graph, "_send_y_0");
  ASSERT_NE(recv_x, nullptr);
  ASSERT_NE(send_y, nullptr);
  for (const NodeDef* node : {recv_x, send_y}) {
    EXPECT_EQ(node->device(), client);
    EXPECT_EQ(StringAttr(*node, "send_device"), client);
    EXPECT_EQ(StringAttr(*node, "recv_device"), client);
    EXPECT_TRUE(node->attr().at("client_terminated").b());
    EXPECT_EQ(static_cast<uint64_t>(node->attr().at("send_device_incarnation").i()),
              worker0->incarnation());
  }
  EXPECT_EQ(StringAttr(*recv_x, "tensor_name"), "x:0");
  EXPECT_EQ(StringAttr(*send_y, "tensor_name"), "y:0");
  EXPECT_EQ(FindNodeDef(client_graph, "ps_part"), nullptr);
  EXPECT_EQ(FindNodeDef(client_graph, "y")->device(), client);

  // The cut edges: x goes to ps, ps_part comes back, each keyed with the
  // sending device's incarnation.
  const GraphDef& ps_graph = ps0->registered.begin()->second.graph_def();
  EXPECT_EQ(FindNodeDef(ps_graph, "ps_part")->device(), Cpu0(kPs0));
  std::vector<const NodeDef*> ps_sends = NodesWithOp(ps_graph, "_Send");
  ASSERT_EQ(ps_sends.size(), 1u);
  EXPECT_EQ(StringAttr(*ps_sends[0], "send_device"), Cpu0(kPs0));
  EXPECT_EQ(StringAttr(*ps_sends[0], "recv_device"), client);
  EXPECT_FALSE(ps_sends[0]->attr().at("client_terminated").b());
  EXPECT_EQ(static_cast<uint64_t>(ps_sends[0]->attr().at("send_device_incarnation").i()),
            ps0->incarnation());
  std::vector<const NodeDef*> client_sends = NodesWithOp(client_graph, "_Send");
  ASSERT_EQ(client_sends.size(), 2u);  // x to ps, and the fetch of y
  for (const NodeDef* send : client_sends) {
    if (send->name() == "_send_y_0") continue;
    EXPECT_EQ(StringAttr(*send, "recv_device"), Cpu0(kPs0));
    EXPECT_EQ(static_cast<uint64_t>(send->attr().at("send_device_incarnation").i()),
              worker0->incarnation());
  }

  // The step: the feed goes to the partition holding its _Recv, the fetch
  // key to the one holding its _Send; one step id, cleaned up everywhere.
  ASSERT_EQ(worker0->runs.size(), 1u);
  ASSERT_EQ(ps0->runs.size(), 1u);
  const RunGraphRequest& client_run = worker0->runs[0];
  const SignatureEndpoints endpoints{client, worker0->incarnation()};
  ASSERT_EQ(client_run.send_size(), 1);
  EXPECT_EQ(client_run.send(0).name(), ClientTerminatedKey(endpoints, {"x", 0}));
  EXPECT_EQ(client_run.send(0).name(),
            Rendezvous::CreateKey(client, worker0->incarnation(), client, "x:0", "0:0"));
  ASSERT_EQ(client_run.recv_key_size(), 1);
  EXPECT_EQ(client_run.recv_key(0), ClientTerminatedKey(endpoints, {"y", 0}));
  EXPECT_EQ(ps0->runs[0].send_size(), 0);
  EXPECT_EQ(ps0->runs[0].recv_key_size(), 0);
  EXPECT_EQ(client_run.step_id(), ps0->runs[0].step_id());
  EXPECT_GT(client_run.step_id(), 0);
  EXPECT_EQ(client_run.graph_handle(), worker0->registered.begin()->first);
  EXPECT_EQ(worker0->cleaned_steps, std::vector<int64_t>{client_run.step_id()});
  EXPECT_EQ(ps0->cleaned_steps, std::vector<int64_t>{client_run.step_id()});
  // Only the master's own task may run its partition on the master's
  // thread (the other call goes out first).
  EXPECT_EQ(worker0->caller_waits, std::vector<bool>{true});
  EXPECT_EQ(ps0->caller_waits, std::vector<bool>{false});
}

TEST_F(MasterSessionTest, ARepeatedSignatureRegistersNothing) {
  GraphDef graph = SplitGraph();
  AddAffine(&graph, "z", "x", 1.0f, 0.0f);
  const std::string handle = CreateSession(graph);
  RunStepResponse response;
  ASSERT_TRUE(Run(handle, {"y:0", "z:0"}, &response).ok());
  // The same signature, then a permutation of it: no new registration.
  ASSERT_TRUE(Run(handle, {"y:0", "z:0"}, &response).ok());
  response.Clear();
  ASSERT_TRUE(Run(handle, {"z", "y"}, &response).ok());
  ASSERT_EQ(response.tensor_size(), 2);
  EXPECT_EQ(response.tensor(0).name(), "z");
  EXPECT_EQ(response.tensor(1).name(), "y");

  FakeWorker* worker0 = cluster_.worker(kWorker0);
  EXPECT_EQ(worker0->registered.size(), 1u);
  EXPECT_EQ(worker0->create_sessions.size(), 1u);
  ASSERT_EQ(worker0->runs.size(), 3u);
  std::set<int64_t> step_ids;
  for (const RunGraphRequest& run : worker0->runs) step_ids.insert(run.step_id());
  EXPECT_EQ(step_ids.size(), 3u) << "every step has a fresh step id";

  // A new signature registers new partitions in the same worker sessions.
  ASSERT_TRUE(Run(handle, {"z:0"}, &response).ok());
  EXPECT_EQ(worker0->registered.size(), 2u);
  EXPECT_EQ(worker0->create_sessions.size(), 1u);
  // z needs nothing from ps.
  EXPECT_EQ(cluster_.worker(kPs0)->registered.size(), 1u);
}

TEST_F(MasterSessionTest, ExtendChecksTheGraphVersion) {
  const std::string handle = CreateSession(SplitGraph());
  ExtendSessionRequest request;
  request.set_session_handle(handle);
  AddAffine(request.mutable_graph_def(), "w", "y", 1.0f, 0.0f);
  request.set_current_graph_version(1);
  ExtendSessionResponse response;
  Status status = master_->ExtendSession(request, &response);
  EXPECT_EQ(status.code(), Code::ABORTED);
  EXPECT_EQ(status.message(), "Current version is 0 but caller expected 1.");

  request.set_current_graph_version(0);
  ASSERT_TRUE(master_->ExtendSession(request, &response).ok());
  EXPECT_EQ(response.new_graph_version(), 1);
  RunStepResponse run;
  ASSERT_TRUE(Run(handle, {"w:0"}, &run).ok());

  // Nodes already in the graph may not come again.
  request.set_current_graph_version(1);
  status = master_->ExtendSession(request, &response);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(status.message().find("'w'"), std::string::npos) << status;
}

TEST_F(MasterSessionTest, CloseSessionDeregistersEverythingAndForgetsTheHandle) {
  const std::string handle = CreateSession(SplitGraph());
  RunStepResponse response;
  ASSERT_TRUE(Run(handle, {"y:0"}, &response).ok());
  CloseSessionRequest close;
  close.set_session_handle(handle);
  CloseSessionResponse closed;
  ASSERT_TRUE(master_->CloseSession(close, &closed).ok());
  EXPECT_EQ(master_->num_sessions(), 0);
  for (const char* task : {kWorker0, kPs0}) {
    FakeWorker* worker = cluster_.worker(task);
    std::set<std::string> handles;
    for (const auto& entry : worker->registered) handles.insert(entry.first);
    EXPECT_EQ(worker->deregistered, handles) << task;
    EXPECT_EQ(worker->deleted_sessions, std::vector<std::string>{handle}) << task;
  }

  Status status = Run(handle, {"y:0"}, &response);
  EXPECT_EQ(status.code(), Code::ABORTED);
  EXPECT_EQ(status.message(), "Session " + handle + " is not found.");
  status = master_->CloseSession(close, &closed);
  EXPECT_EQ(status.code(), Code::ABORTED);
  ExtendSessionRequest extend;
  extend.set_session_handle(handle);
  ExtendSessionResponse extended;
  EXPECT_EQ(master_->ExtendSession(extend, &extended).code(), Code::ABORTED);
}

TEST_F(MasterSessionTest, AFailingPartitionCancelsTheOthersAndItsErrorWins) {
  const std::string handle = CreateSession(SplitGraph());
  FakeWorker* worker0 = cluster_.worker(kWorker0);
  FakeWorker* ps0 = cluster_.worker(kPs0);
  std::atomic<bool> client_cancelled{false};
  // The client partition waits for ps (as a real one would) until cancelled.
  worker0->run_graph = [&](CallOptions* call, const RunGraphInput*, RunGraphOutput*,
                           WorkerInterface::StatusCallback done) {
    call->SetCancelCallback([&client_cancelled, done] {
      client_cancelled = true;
      done(errors::Cancelled("RunGraph was cancelled"));
    });
  };
  ps0->run_graph = [](CallOptions*, const RunGraphInput*, RunGraphOutput*,
                      WorkerInterface::StatusCallback done) {
    std::thread([done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      done(errors::FailedPrecondition("Attempting to use uninitialized value v"));
    }).detach();
  };
  RunStepResponse response;
  const auto start = std::chrono::steady_clock::now();
  Status status = Run(handle, {"y:0"}, &response);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION) << status;
  EXPECT_EQ(status.message(), "Attempting to use uninitialized value v");
  EXPECT_TRUE(client_cancelled);
  EXPECT_EQ(response.tensor_size(), 0);
  ASSERT_EQ(worker0->runs.size(), 1u);
  EXPECT_EQ(worker0->cleaned_steps, std::vector<int64_t>{worker0->runs[0].step_id()});
  EXPECT_EQ(ps0->cleaned_steps, std::vector<int64_t>{worker0->runs[0].step_id()});
}

TEST_F(MasterSessionTest, AStepPastItsTimeoutIsDeadlineExceeded) {
  const std::string handle = CreateSession(SplitGraph());
  for (const char* task : {kWorker0, kPs0}) {
    cluster_.worker(task)->run_graph = [](CallOptions* call, const RunGraphInput*, RunGraphOutput*,
                                          WorkerInterface::StatusCallback done) {
      call->SetCancelCallback([done] { done(errors::Cancelled("RunGraph was cancelled")); });
    };
  }
  RunStepResponse response;
  Status status = Run(handle, {"y:0"}, &response, {"x:0"}, /*timeout_ms=*/100);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_EQ(status.message(), "Timed out after 100 ms");
}

TEST_F(MasterSessionTest, CloseCancelsARunningStep) {
  const std::string handle = CreateSession(SplitGraph());
  for (const char* task : {kWorker0, kPs0}) {
    cluster_.worker(task)->run_graph = [](CallOptions* call, const RunGraphInput*, RunGraphOutput*,
                                          WorkerInterface::StatusCallback done) {
      call->SetCancelCallback([done] { done(errors::Cancelled("RunGraph was cancelled")); });
    };
  }
  Status step_status;
  std::thread step([&] {
    RunStepResponse response;
    step_status = Run(handle, {"y:0"}, &response);
  });
  // Close once the step is in flight on both workers.
  for (int i = 0; i < 500 && cluster_.worker(kPs0)->num_runs() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CloseSessionRequest close;
  close.set_session_handle(handle);
  CloseSessionResponse closed;
  EXPECT_TRUE(master_->CloseSession(close, &closed).ok());
  step.join();
  EXPECT_EQ(step_status.code(), Code::CANCELLED) << step_status;
  EXPECT_NE(step_status.message().find("closed"), std::string::npos) << step_status;
  // The step ended (and cleaned up) before the graphs were deregistered.
  EXPECT_EQ(cluster_.worker(kWorker0)->cleaned_steps.size(), 1u);
  EXPECT_EQ(cluster_.worker(kWorker0)->deregistered.size(), 1u);
}

TEST_F(MasterSessionTest, StepsDoNotWaitForCleanupButCloseDoes) {
  const std::string handle = CreateSession(SplitGraph());
  FakeWorker* worker0 = cluster_.worker(kWorker0);
  worker0->cleanup_delay_ms = 300;
  RunStepResponse response;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(Run(handle, {"y:0"}, &response).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  CloseSessionRequest close;
  close.set_session_handle(handle);
  CloseSessionResponse closed;
  ASSERT_TRUE(master_->CloseSession(close, &closed).ok());
  // The session is gone, and its last cleanup was answered before that.
  EXPECT_EQ(worker0->cleaned_steps.size(), 1u);
}

TEST_F(MasterSessionTest, AFedPlaceholdersControlDependentsWaitForTheFeed) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  AddAffine(&graph, "c", "x", 1.0f, 0.0f);
  session_test::AddScalar(&graph, "after", 1.0f)->add_input("^x");
  const std::string handle = CreateSession(graph);
  RunStepResponse response;
  Status status = Run(handle, {"after:0", "c:0"}, &response);
  ASSERT_TRUE(status.ok()) << status;
  const GraphDef& client = cluster_.worker(kWorker0)->registered.begin()->second.graph_def();
  EXPECT_EQ(FindNodeDef(client, "x"), nullptr) << "a fed placeholder never runs";
  const NodeDef* after = FindNodeDef(client, "after");
  ASSERT_NE(after, nullptr);
  ASSERT_EQ(after->input_size(), 1);
  EXPECT_EQ(after->input(0), "^_recv_x_0");
}

TEST_F(MasterSessionTest, ASilentTaskFailsCreateSessionNamingIt) {
  cluster_.worker(kWorker1)->running = false;
  CreateSessionRequest request;
  *request.mutable_graph_def() = SplitGraph();
  request.mutable_config()->set_operation_timeout_in_ms(300);
  CreateSessionResponse response;
  const auto start = std::chrono::steady_clock::now();
  Status status = master_->CreateSession(request, &response);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_NE(status.message().find(kWorker1), std::string::npos) << status;
  EXPECT_EQ(status.message().find(kPs0), std::string::npos) << status;
  EXPECT_GE(waited, std::chrono::milliseconds(290));
  EXPECT_LT(waited, std::chrono::seconds(3));

  // A task that comes up while the master waits is found.
  std::thread late_start([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cluster_.worker(kWorker1)->running = true;
  });
  request.mutable_config()->set_operation_timeout_in_ms(5000);
  status = master_->CreateSession(request, &response);
  late_start.join();
  EXPECT_TRUE(status.ok()) << status;
}

TEST_F(MasterSessionTest, DeviceFiltersLimitTheTasksAsked) {
  cluster_.worker(kWorker1)->running = false;  // filtered out, so never waited for
  ConfigProto config;
  config.add_device_filters("/job:ps");
  const std::string handle = CreateSession(SplitGraph(), config);
  ListDevicesRequest request;
  request.set_session_handle(handle);
  ListDevicesResponse devices;
  ASSERT_TRUE(master_->ListDevices(request, &devices).ok());
  ASSERT_EQ(devices.local_device_size(), 1);
  EXPECT_EQ(devices.local_device(0).name(), Cpu0(kWorker0));
  ASSERT_EQ(devices.remote_device_size(), 1);
  EXPECT_EQ(devices.remote_device(0).name(), Cpu0(kPs0));

  // A node asking for the filtered-out task cannot be placed.
  ExtendSessionRequest extend;
  extend.set_session_handle(handle);
  AddAffine(extend.mutable_graph_def(), "on_w1", "y", 1.0f, 0.0f, "/job:worker/task:1");
  ExtendSessionResponse extended;
  ASSERT_TRUE(master_->ExtendSession(extend, &extended).ok());
  RunStepResponse response;
  Status status = Run(handle, {"on_w1:0"}, &response);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("on_w1"), std::string::npos) << status;

  ConfigProto bad;
  bad.add_device_filters("not a device");
  CreateSessionRequest create;
  *create.mutable_config() = bad;
  CreateSessionResponse created;
  EXPECT_EQ(master_->CreateSession(create, &created).code(), Code::INVALID_ARGUMENT);
}

TEST_F(MasterSessionTest, BadGraphsFeedsAndFetchesAreCleanErrors) {
  GraphDef invalid;
  AddNode(&invalid, "a", "NoSuchOp");
  CreateSessionRequest create;
  *create.mutable_graph_def() = invalid;
  create.mutable_config()->set_operation_timeout_in_ms(5000);
  CreateSessionResponse created;
  EXPECT_EQ(master_->CreateSession(create, &created).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(master_->num_sessions(), 0);

  const std::string handle = CreateSession(SplitGraph());
  RunStepResponse response;
  Status status = Run(handle, {"nope:0"}, &response);
  EXPECT_EQ(status.code(), Code::NOT_FOUND) << status;
  EXPECT_NE(status.message().find("nope"), std::string::npos);

  RunStepRequest request;
  request.set_session_handle(handle);
  NamedTensorProto* feed = request.add_feed();
  feed->set_name("x:0");
  Tensor int_value(DT_INT32, TensorShape());
  int_value.data<int32_t>()[0] = 1;
  int_value.AsProtoTensorContent(feed->mutable_tensor());
  request.add_fetch("y:0");
  status = RunStepWithProtos(request, &response);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("'x:0'"), std::string::npos) << status;

  feed->mutable_tensor()->set_dtype(DT_FLOAT);  // an int payload claiming float
  feed->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(1000);
  status = RunStepWithProtos(request, &response);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;

  EXPECT_EQ(Run(handle, {}, &response).code(), Code::INVALID_ARGUMENT);  // nothing to run
  // Fed values come as tensors, never in the request's protos.
  NamedTensors fetched;
  EXPECT_EQ(master_->RunStep(request, {}, &response, &fetched).code(), Code::INVALID_ARGUMENT);
  request.clear_feed();
  request.set_partial_run_handle("p");
  EXPECT_EQ(RunStepWithProtos(request, &response).code(),
            Code::INVALID_ARGUMENT);  // no such handle
  // Nothing was run on a worker by any of this.
  EXPECT_TRUE(cluster_.worker(kWorker0)->runs.empty());
}

TEST_F(MasterSessionTest, CallablesRunByHandle) {
  const std::string handle = CreateSession(SplitGraph());
  MakeCallableRequest make;
  make.set_session_handle(handle);
  make.mutable_options()->add_feed("x");
  make.mutable_options()->add_fetch("y:0");
  make.mutable_options()->add_fetch("y");
  MakeCallableResponse made;
  ASSERT_TRUE(master_->MakeCallable(make, &made).ok());
  EXPECT_EQ(cluster_.worker(kWorker0)->registered.size(), 1u);

  RunCallableRequest run;
  run.set_session_handle(handle);
  run.set_handle(made.handle());
  FloatScalar(3.0f).AsProtoTensorContent(run.add_feed());
  RunCallableResponse ran;
  Status status = RunCallableWithProtos(run, &ran);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ran.fetch_size(), 2);
  // Same signature through RunStep: no new registration.
  RunStepResponse response;
  ASSERT_TRUE(Run(handle, {"y:0", "y"}, &response, {"x"}).ok());
  EXPECT_EQ(cluster_.worker(kWorker0)->registered.size(), 1u);

  run.clear_feed();
  EXPECT_EQ(RunCallableWithProtos(run, &ran).code(), Code::INVALID_ARGUMENT);
  ReleaseCallableRequest release;
  release.set_session_handle(handle);
  release.set_handle(made.handle());
  ReleaseCallableResponse released;
  ASSERT_TRUE(master_->ReleaseCallable(release, &released).ok());
  FloatScalar(3.0f).AsProtoTensorContent(run.add_feed());
  EXPECT_EQ(RunCallableWithProtos(run, &ran).code(), Code::INVALID_ARGUMENT);
}

TEST_F(MasterSessionTest, ResetClosesSessionsAndClearsContainersOnTheWorkers) {
  const std::string handle = CreateSession(SplitGraph());
  RunStepResponse response;
  ASSERT_TRUE(Run(handle, {"y:0"}, &response).ok());
  ResetRequest reset;
  reset.add_container("c1");
  reset.add_device_filters("/job:ps");
  ResetResponse done;
  ASSERT_TRUE(master_->Reset(reset, &done).ok());
  EXPECT_EQ(master_->num_sessions(), 0);
  // The filter selects ps; the master's own task is always included.
  for (const char* task : {kPs0, kWorker0}) {
    ASSERT_EQ(cluster_.worker(task)->cleanup_all.size(), 1u) << task;
    EXPECT_EQ(cluster_.worker(task)->cleanup_all[0].container(0), "c1");
  }
  EXPECT_TRUE(cluster_.worker(kWorker1)->cleanup_all.empty());
  EXPECT_EQ(cluster_.worker(kWorker0)->deleted_sessions, std::vector<std::string>{handle});
}

TEST_F(MasterSessionTest, ASessionMayBringItsOwnCluster) {
  // The client's cluster names the master's task by the address it dialled.
  ConfigProto config;
  JobDef* job = config.mutable_cluster_def()->add_job();
  job->set_name("worker");
  (*job->mutable_tasks())[1] = "fake-worker1:1";
  JobDef* ps = config.mutable_cluster_def()->add_job();
  ps->set_name("ps");
  (*ps->mutable_tasks())[0] = "fake-ps0:1";
  CreateSessionRequest request;
  *request.mutable_graph_def() = SplitGraph();
  *request.mutable_config() = config;
  request.set_target("grpc://fake-worker1:1");
  CreateSessionResponse response;
  ASSERT_TRUE(master_->CreateSession(request, &response).ok());
  RunStepResponse run;
  ASSERT_TRUE(Run(response.session_handle(), {"y:0"}, &run).ok());
  // worker1 is now the client's task; worker0 is outside this cluster.
  EXPECT_EQ(cluster_.worker(kWorker1)->registered.size(), 1u);
  EXPECT_TRUE(cluster_.worker(kWorker0)->registered.empty());
  EXPECT_EQ(cluster_.worker(kWorker1)->create_sessions[0].server_def().cluster().job_size(), 2);
}

TEST(MasterCreateTest, RejectsOptionsWithoutFactoryOrOwnTask) {
  FakeCluster cluster;
  MasterOptions options = cluster.Options();
  std::unique_ptr<Master> master;
  options.server_def.set_task_index(7);
  EXPECT_EQ(Master::Create(options, &master).code(), Code::INVALID_ARGUMENT);
  options = cluster.Options();
  options.worker_cache_factory = nullptr;
  EXPECT_EQ(Master::Create(options, &master).code(), Code::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace tensorweave
