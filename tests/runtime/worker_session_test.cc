// Worker sessions over gRPC on loopback: variables living across steps and
// sessions (and apart with isolate_session_state), CleanupAll, the worker
// cache, and every malformed request answered with a clean error.
#include <gtest/gtest.h>

#include "runtime/distributed/grpc_worker_cache.h"
#include "tests/runtime/worker_test_util.h"

namespace tensorweave {
namespace {

using namespace worker_test;  // NOLINT: the helpers of these tests

// v = 10, fetched under ClientKey("init").
GraphDef InitGraph(const TestWorker& worker) {
  GraphDef graph;
  const std::string& d = worker.device();
  NodeDef* variable = AddNode(&graph, "v", "VariableV2", d);
  Attr(variable, "dtype", DT_FLOAT);
  Attr(variable, "shape", TensorShape({}));
  AddConst(&graph, "ten", d, Scalar(10));
  Attr(AddNode(&graph, "assign", "Assign", d, {"v", "ten"}), "T", DT_FLOAT);
  AddSend(&graph, "assign_send", "assign", "init", d, worker.incarnation(), d, true);
  return graph;
}

// v += 1, the new value fetched under ClientKey("inc").
GraphDef IncrementGraph(const TestWorker& worker) {
  GraphDef graph;
  const std::string& d = worker.device();
  NodeDef* variable = AddNode(&graph, "v", "VariableV2", d);
  Attr(variable, "dtype", DT_FLOAT);
  Attr(variable, "shape", TensorShape({}));
  AddConst(&graph, "one", d, Scalar(1));
  Attr(AddNode(&graph, "inc", "AssignAdd", d, {"v", "one"}), "T", DT_FLOAT);
  AddSend(&graph, "inc_send", "inc", "inc", d, worker.incarnation(), d, true);
  return graph;
}

// Runs a registered graph without feeds, fetching `fetch`; its value or
// -1 when the step failed (the status in *status).
float RunAndFetch(const TestWorker& worker, const std::string& handle, const std::string& session,
                  const std::string& fetch, Status* status = nullptr) {
  static int64_t step_id = 1000;
  RunGraphRequest request = RunRequest(handle, ++step_id, session);
  request.add_recv_key(ClientKey(worker, fetch));
  RunGraphResponse response;
  Status result = worker.client()->RunGraph(request, &response, kCallTimeoutMs);
  if (status != nullptr) *status = result;
  if (!result.ok() || response.recv_size() != 1) return -1;
  return ScalarOf(response.recv(0).tensor());
}

TEST(WorkerSessionTest, VariablesLiveAcrossStepsAndSessionsUnlessIsolated) {
  TestWorker worker("ps", 0);
  ASSERT_TRUE(CreateSession(worker.client(), "trainer1", false).ok());
  ASSERT_TRUE(CreateSession(worker.client(), "trainer2", false).ok());
  ASSERT_TRUE(CreateSession(worker.client(), "isolated", true).ok());
  std::string init1, inc1, inc2, init_isolated, inc_isolated;
  ASSERT_TRUE(Register(worker.client(), InitGraph(worker), &init1, "trainer1").ok());
  ASSERT_TRUE(Register(worker.client(), IncrementGraph(worker), &inc1, "trainer1").ok());
  ASSERT_TRUE(Register(worker.client(), IncrementGraph(worker), &inc2, "trainer2").ok());
  ASSERT_TRUE(Register(worker.client(), InitGraph(worker), &init_isolated, "isolated").ok());
  ASSERT_TRUE(Register(worker.client(), IncrementGraph(worker), &inc_isolated, "isolated").ok());

  EXPECT_EQ(RunAndFetch(worker, init1, "trainer1", "init"), 10.0f);
  EXPECT_EQ(RunAndFetch(worker, inc1, "trainer1", "inc"), 11.0f);
  EXPECT_EQ(RunAndFetch(worker, inc1, "trainer1", "inc"), 12.0f);
  // Another session sees (and updates) the same variable, as a second
  // trainer does with a ps task's parameters.
  EXPECT_EQ(RunAndFetch(worker, inc2, "trainer2", "inc"), 13.0f);

  // The isolated session has its own, still uninitialized, variable.
  Status status;
  EXPECT_EQ(RunAndFetch(worker, inc_isolated, "isolated", "inc", &status), -1.0f);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION) << status;
  EXPECT_EQ(RunAndFetch(worker, init_isolated, "isolated", "init"), 10.0f);
  EXPECT_EQ(RunAndFetch(worker, inc_isolated, "isolated", "inc"), 11.0f);
  EXPECT_EQ(RunAndFetch(worker, inc1, "trainer1", "inc"), 14.0f);

  // Deleting a session frees its graphs, not the shared variables.
  DeleteWorkerSessionRequest delete_request;
  delete_request.set_session_handle("trainer2");
  DeleteWorkerSessionResponse deleted;
  ASSERT_TRUE(worker.client()->DeleteWorkerSession(delete_request, &deleted, kCallTimeoutMs).ok());
  EXPECT_EQ(RunAndFetch(worker, inc2, "trainer2", "inc", &status), -1.0f);
  EXPECT_EQ(status.code(), Code::ABORTED) << status;
  EXPECT_EQ(RunAndFetch(worker, inc1, "trainer1", "inc"), 15.0f);
  // Deleting it again (a master retrying) is fine.
  EXPECT_TRUE(worker.client()->DeleteWorkerSession(delete_request, &deleted, kCallTimeoutMs).ok());

  // The legacy session (no handle) shares the worker's variables too.
  std::string legacy_inc;
  ASSERT_TRUE(Register(worker.client(), IncrementGraph(worker), &legacy_inc).ok());
  EXPECT_EQ(RunAndFetch(worker, legacy_inc, "", "inc"), 16.0f);

  // CleanupAll (a master's Reset) empties the shared variables only.
  ASSERT_TRUE(CleanupAll(worker.client()).ok());
  EXPECT_EQ(RunAndFetch(worker, inc1, "trainer1", "inc", &status), -1.0f);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION) << status;
  EXPECT_EQ(RunAndFetch(worker, inc_isolated, "isolated", "inc"), 12.0f);
  EXPECT_EQ(RunAndFetch(worker, init1, "trainer1", "init"), 10.0f);
  EXPECT_EQ(RunAndFetch(worker, inc1, "trainer1", "inc"), 11.0f);
}

TEST(WorkerSessionTest, CreateWorkerSessionChecksItsRequest) {
  TestWorker worker("worker", 2);
  EXPECT_EQ(CreateSession(worker.client(), "", false).code(), Code::INVALID_ARGUMENT);
  ASSERT_TRUE(CreateSession(worker.client(), "s", false).ok());
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle, "s").ok());
  // Created again (a master retrying): the existing session stays, graphs
  // and all, as in TensorFlow.
  ASSERT_TRUE(CreateSession(worker.client(), "s", true).ok());
  RunGraphRequest run = RunRequest(handle, 1, "s");
  *run.add_send() = Named(ClientKey(worker, "x"), Scalar(1));
  RunGraphResponse ran;
  EXPECT_TRUE(worker.client()->RunGraph(run, &ran, kCallTimeoutMs).ok());

  CreateWorkerSessionRequest request;
  request.set_session_handle("elsewhere");
  request.mutable_server_def()->set_job_name("worker");
  request.mutable_server_def()->set_task_index(3);  // this is task 2
  CreateWorkerSessionResponse response;
  EXPECT_EQ(worker.client()->CreateWorkerSession(request, &response, kCallTimeoutMs).code(),
            Code::INVALID_ARGUMENT);
  request.mutable_server_def()->set_task_index(2);
  EXPECT_TRUE(worker.client()->CreateWorkerSession(request, &response, kCallTimeoutMs).ok());

  ClusterDef bad_cluster;
  JobDef* job = bad_cluster.add_job();
  job->set_name("ps");
  (*job->mutable_tasks())[0] = "";
  EXPECT_EQ(CreateSession(worker.client(), "bad", false, bad_cluster).code(),
            Code::INVALID_ARGUMENT);
  job->set_name("9ps");
  (*job->mutable_tasks())[0] = "127.0.0.1:1";
  EXPECT_EQ(CreateSession(worker.client(), "bad", false, bad_cluster).code(),
            Code::INVALID_ARGUMENT);

  // A request naming a session this worker does not have: ABORTED, the
  // master's cue that the worker restarted.
  Status status = Register(worker.client(), InitGraph(worker), &handle, "unknown");
  EXPECT_EQ(status.code(), Code::ABORTED) << status;
}

TEST(WorkerSessionTest, ARestartedMastersOldSessionsAreDropped) {
  TestWorker worker("worker", 0);
  auto create = [&](const std::string& handle, int64_t incarnation) {
    CreateWorkerSessionRequest request;
    request.set_session_handle(handle);
    request.set_master_task("/job:chief/replica:0/task:0");
    request.set_master_incarnation(incarnation);
    CreateWorkerSessionResponse response;
    return worker.client()->CreateWorkerSession(request, &response, kCallTimeoutMs);
  };
  auto registers = [&](const std::string& session) {
    std::string handle;
    return Register(worker.client(), AffineGraph(worker), &handle, session);
  };
  ASSERT_TRUE(create("first", 1).ok());
  ASSERT_TRUE(create("second", 1).ok());
  EXPECT_TRUE(registers("first").ok());
  // The same master, restarted: its earlier sessions are gone.
  ASSERT_TRUE(create("third", 2).ok());
  EXPECT_EQ(registers("first").code(), Code::ABORTED);
  EXPECT_EQ(registers("second").code(), Code::ABORTED);
  EXPECT_TRUE(registers("third").ok());
}

TEST(WorkerSessionTest, RegisterGraphRefusesGraphsThatDoNotBelongHere) {
  TestWorker worker("worker", 0);
  std::string handle;
  auto expect_invalid = [&](const GraphDef& graph, const std::string& mentions) {
    Status status = Register(worker.client(), graph, &handle);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
    EXPECT_NE(status.message().find(mentions), std::string::npos) << status;
  };
  GraphDef graph = AffineGraph(worker);
  graph.mutable_node(2)->set_device("/job:worker/replica:0/task:1/device:CPU:0");
  expect_invalid(graph, graph.node(2).name());
  graph = AffineGraph(worker);
  graph.mutable_node(3)->clear_device();
  expect_invalid(graph, graph.node(3).name());
  graph = AffineGraph(worker);
  graph.mutable_node(3)->set_op("NoSuchOp");
  Status unknown_op = Register(worker.client(), graph, &handle);
  EXPECT_EQ(unknown_op.code(), Code::NOT_FOUND) << unknown_op;  // as TensorFlow
  graph = AffineGraph(worker);
  graph.mutable_node(3)->set_input(0, "missing");
  expect_invalid(graph, "missing");
  graph = AffineGraph(worker);
  NodeDef* arg = AddNode(&graph, "arg", "_Arg", worker.device());
  Attr(arg, "T", DT_FLOAT);
  Attr(arg, "index", int64_t{0});
  expect_invalid(graph, "arg");
  graph = AffineGraph(worker);
  Attr(graph.mutable_node(0), "send_device", std::string("not a device"));
  expect_invalid(graph, graph.node(0).name());
  graph = AffineGraph(worker);
  graph.mutable_node(4)->clear_attr();
  Status status = Register(worker.client(), graph, &handle);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
}

TEST(WorkerSessionTest, RunGraphRefusesMalformedRequests) {
  TestWorker worker("worker", 0);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), AffineGraph(worker), &handle).ok());
  auto run = [&](const RunGraphRequest& request, RunGraphResponse* response = nullptr) {
    RunGraphResponse ignored;
    return worker.client()->RunGraph(request, response != nullptr ? response : &ignored,
                                     kCallTimeoutMs);
  };
  const std::string x = ClientKey(worker, "x");
  const std::string y = ClientKey(worker, "y");

  RunGraphRequest request = RunRequest(handle, 1);  // x is not fed
  request.add_recv_key(y);
  EXPECT_EQ(run(request).code(), Code::INVALID_ARGUMENT);

  request = RunRequest(handle, 2);
  *request.add_send() = Named(ClientKey(worker, "not_a_feed"), Scalar(1));
  *request.add_send() = Named(x, Scalar(1));
  EXPECT_EQ(run(request).code(), Code::INVALID_ARGUMENT);

  request = RunRequest(handle, 3);
  *request.add_send() = Named(x, Scalar(1));
  *request.add_send() = Named(x, Scalar(2));
  EXPECT_EQ(run(request).code(), Code::INVALID_ARGUMENT);

  request = RunRequest(handle, 4);
  *request.add_send() = Named(x, Scalar(1));
  request.add_recv_key(ClientKey(worker, "not_a_fetch"));
  EXPECT_EQ(run(request).code(), Code::INVALID_ARGUMENT);

  request = RunRequest(handle, 5);
  NamedTensorProto* bad = request.add_send();
  *bad = Named(x, FloatTensor({1, 2}, TensorShape({2})));
  bad->mutable_tensor()->set_tensor_content("three bytes");  // not 2 floats
  EXPECT_EQ(run(request).code(), Code::INVALID_ARGUMENT);

  request = RunRequest(handle, 6);
  Tensor integer(DT_INT32, TensorShape({}));
  integer.data<int32_t>()[0] = 1;
  *request.add_send() = Named(x, integer);
  EXPECT_EQ(run(request).code(), Code::INVALID_ARGUMENT);

  request = RunRequest(handle, 7);
  *request.add_send() = Named(x, integer);
  request.set_is_partial(true);  // a partial run's sends are checked alike
  EXPECT_EQ(run(request).code(), Code::INVALID_ARGUMENT);

  // store_errors_in_response_body: the RPC succeeds, the body has the error.
  request = RunRequest("no such handle", 8);
  request.set_store_errors_in_response_body(true);
  RunGraphResponse response;
  EXPECT_TRUE(run(request, &response).ok());
  EXPECT_EQ(response.status_code(), static_cast<int>(Code::ABORTED));
  EXPECT_NE(response.status_error_message().find("no such handle"), std::string::npos);

  // None of this disturbed the graph.
  request = RunRequest(handle, 9);
  *request.add_send() = Named(x, Scalar(2));
  request.add_recv_key(y);
  ASSERT_TRUE(run(request, &response).ok());
  ASSERT_EQ(response.recv_size(), 1);
  EXPECT_EQ(ScalarOf(response.recv(0).tensor()), 5.0f);
}

TEST(WorkerSessionTest, RecvTensorRefusesKeysItCannotServe) {
  TestWorker worker("worker", 0);
  RecvTensorResponse response;
  for (const std::string& key : {std::string(""), std::string("a;b;c"), std::string(";;;;"),
                                 worker.device() + ";zz;" + worker.device() + ";t;0:0"}) {
    Status status = RecvTensor(worker.client(), 1, key, &response);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << key << " " << status;
  }
  // The sender is another task: this worker cannot serve it.
  const std::string elsewhere =
      Rendezvous::CreateKey("/job:worker/replica:0/task:1/device:CPU:0", 5, worker.device(), "t");
  Status status = RecvTensor(worker.client(), 1, elsewhere, &response);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  // A receive that waits is bounded by the caller's deadline.
  status = RecvTensor(worker.client(), 1, ClientKey(worker, "never"), &response, 200);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
}

TEST(WorkerSessionTest, ARemoteReceiveWithoutAClusterFailsTheStep) {
  // The legacy session of a worker started without a cluster reaches no
  // other task: a _Recv from one fails at once instead of waiting.
  TestWorker worker("worker", 0);
  GraphDef graph;
  AddRecv(&graph, "r", "edge", "/job:ps/replica:0/task:0/device:CPU:0", 1, worker.device(), false);
  AddSend(&graph, "out", "r", "out", worker.device(), worker.incarnation(), worker.device(), true);
  std::string handle;
  ASSERT_TRUE(Register(worker.client(), graph, &handle).ok());
  RunGraphResponse response;
  Status status = worker.client()->RunGraph(RunRequest(handle, 1), &response, kCallTimeoutMs);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION) << status;
}

TEST(WorkerCacheTest, ReachesEveryTaskOfTheCluster) {
  TestWorker a("ps", 0);
  TestWorker b("worker", 0);
  ClusterDef cluster = ClusterOf({{"ps", &a}, {"worker", &b}});
  (*cluster.mutable_job(1)->mutable_tasks())[1] = "grpc://127.0.0.1:1";
  std::unique_ptr<WorkerCacheInterface> cache;
  ASSERT_TRUE(NewGrpcWorkerCache(cluster, &cache).ok());
  std::vector<std::string> tasks;
  cache->ListWorkers(&tasks);
  EXPECT_EQ(tasks,
            (std::vector<std::string>{"/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0",
                                      "/job:worker/replica:0/task:1"}));
  WorkerInterface* ps = cache->GetOrCreateWorker("/job:ps/replica:0/task:0");
  ASSERT_NE(ps, nullptr);
  EXPECT_EQ(cache->GetOrCreateWorker(a.device()), ps);
  EXPECT_EQ(cache->GetOrCreateWorker("/job:ps/replica:0/task:7"), nullptr);
  EXPECT_EQ(cache->GetOrCreateWorker("ps"), nullptr);
  GetStatusResponse status_response;
  ASSERT_TRUE(ps->GetStatus(GetStatusRequest(), &status_response, kCallTimeoutMs).ok());
  ASSERT_EQ(status_response.device_attributes_size(), 1);
  EXPECT_EQ(status_response.device_attributes(0).name(), a.device());
  EXPECT_EQ(status_response.device_attributes(0).incarnation(), a.incarnation());
  // Nobody listens at the third task: a bounded call says so.
  WorkerInterface* absent = cache->GetOrCreateWorker("/job:worker/replica:0/task:1");
  ASSERT_NE(absent, nullptr);
  Status status = absent->GetStatus(GetStatusRequest(), &status_response, 2000);
  EXPECT_TRUE(status.code() == Code::UNAVAILABLE || status.code() == Code::DEADLINE_EXCEEDED)
      << status;
}

}  // namespace
}  // namespace tensorweave
