// GrpcSession against a fake MasterService on a loopback port: the fake
// records every request and answers as a test tells it, so these tests check
// what the client puts on the wire (only new nodes, graph versions, feeds,
// fetches, deadlines) and how it reads answers (fetch order, statuses from
// the body and from gRPC, timeouts, an unreachable master, Close). Every
// RPC the client makes here has a deadline or ends within a bounded wait.
#include "runtime/distributed/grpc_session.h"

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "runtime/common_runtime/direct_session.h"
#include "runtime/common_runtime/session.h"
#include "runtime/distributed/grpc_channel.h"
#include "runtime/distributed/grpc_server.h"
#include "runtime/distributed/grpc_util.h"
#include "runtime/distributed/server_def_util.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using session_test::AddNode;
using session_test::FloatScalar;
using session_test::FloatVector;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// The longest any fake handler blocks, so a broken client cannot hang a test.
constexpr auto kLongestHandlerWait = std::chrono::seconds(10);

::grpc::Status ToWire(const Status& status) {
  return ::grpc::Status(static_cast<::grpc::StatusCode>(status.code()), status.message());
}

// Fetch names the fake master treats specially.
const char kBodyErrorFetch[] = "body_error:0";  // NOT_FOUND in the response body
const char kGrpcErrorFetch[] = "grpc_error:0";  // FAILED_PRECONDITION as the gRPC status
const char kSlowFetch[] = "slow:0";             // waits until the client gives up
const char kMalformedFetch[] = "malformed:0";   // a float[4] with 3 bytes of content
const char kStrangerFetch[] = "stranger:0";     // answered under another name
const char kMissingFetch[] = "missing:0";       // not answered at all

class FakeMaster final : public tensorflow::MasterService::Service {
 public:
  ::grpc::Status CreateSession(::grpc::ServerContext*, const CreateSessionRequest* request,
                               CreateSessionResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    creates_.push_back(*request);
    response->set_session_handle("session-1");
    response->set_graph_version(graph_version_);
    return ::grpc::Status::OK;
  }

  ::grpc::Status ExtendSession(::grpc::ServerContext*, const ExtendSessionRequest* request,
                               ExtendSessionResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    extends_.push_back(*request);
    if (request->current_graph_version() != graph_version_) {
      return ::grpc::Status(::grpc::StatusCode::ABORTED, "stale graph version");
    }
    response->set_new_graph_version(++graph_version_);
    return ::grpc::Status::OK;
  }

  // Answers each fetch "<name>:0" with the float scalar fetch_values[name],
  // in the reverse of the requested order (a client must reorder).
  ::grpc::Status RunStep(::grpc::ServerContext* context, const RunStepRequest* request,
                         RunStepResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      runs_.push_back(*request);
    }
    for (const std::string& fetch : request->fetch()) {
      if (fetch == kBodyErrorFetch) {
        response->set_status_code(static_cast<int>(Code::NOT_FOUND));
        response->set_status_error_message("no such tensor in the body");
        return ::grpc::Status::OK;
      }
      if (fetch == kGrpcErrorFetch) {
        return ::grpc::Status(::grpc::StatusCode::FAILED_PRECONDITION, "as the gRPC status");
      }
      if (fetch == kSlowFetch) {
        WaitForCancellation(context);
        return ::grpc::Status(::grpc::StatusCode::CANCELLED, "slow step ended");
      }
      if (fetch.rfind("code_", 0) == 0) {  // "code_<n>:0" answers with gRPC code n
        const int code = std::atoi(fetch.c_str() + 5);
        return ::grpc::Status(static_cast<::grpc::StatusCode>(code),
                              "answered with code " + std::to_string(code));
      }
    }
    for (int i = request->fetch_size() - 1; i >= 0; --i) {
      const std::string& fetch = request->fetch(i);
      if (fetch == kMissingFetch) continue;
      NamedTensorProto* named = response->add_tensor();
      named->set_name(fetch == kStrangerFetch ? "not_fetched:0" : fetch);
      FloatScalar(static_cast<float>(fetch[0])).AsProtoTensorContent(named->mutable_tensor());
      if (fetch == kMalformedFetch) {
        named->mutable_tensor()->mutable_tensor_shape()->add_dim()->set_size(4);
        named->mutable_tensor()->set_tensor_content("abc");
      }
    }
    return ::grpc::Status::OK;
  }

  ::grpc::Status CloseSession(::grpc::ServerContext*, const CloseSessionRequest* request,
                              CloseSessionResponse*) override {
    std::lock_guard<std::mutex> lock(mu_);
    closes_.push_back(request->session_handle());
    return ::grpc::Status::OK;
  }

  ::grpc::Status ListDevices(::grpc::ServerContext*, const ListDevicesRequest* request,
                             ListDevicesResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    list_devices_handles_.push_back(request->session_handle());
    proto::DeviceAttributes* local = response->add_local_device();
    local->set_name("/job:master/replica:0/task:0/device:CPU:0");
    local->set_device_type("CPU");
    local->set_memory_limit(1024);
    proto::DeviceAttributes* remote = response->add_remote_device();
    remote->set_name("/job:worker/replica:0/task:3/device:CPU:0");
    remote->set_device_type("CPU");
    return ::grpc::Status::OK;
  }

  ::grpc::Status Reset(::grpc::ServerContext*, const ResetRequest* request,
                       ResetResponse*) override {
    std::lock_guard<std::mutex> lock(mu_);
    resets_.push_back(*request);
    return ::grpc::Status::OK;
  }

  ::grpc::Status MakeCallable(::grpc::ServerContext*, const MakeCallableRequest* request,
                              MakeCallableResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    make_callables_.push_back(*request);
    callable_options_[next_callable_] = request->options();
    response->set_handle(next_callable_++);
    return ::grpc::Status::OK;
  }

  // Returns each feed plus one, as fetch i (one fetch per feed).
  ::grpc::Status RunCallable(::grpc::ServerContext* context, const RunCallableRequest* request,
                             RunCallableResponse* response) override {
    CallableOptions options;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto found = callable_options_.find(request->handle());
      if (found == callable_options_.end()) {
        return ::grpc::Status(::grpc::StatusCode::INVALID_ARGUMENT, "unknown handle");
      }
      options = found->second;
    }
    if (options.fetch_size() > 0 && options.fetch(0) == kSlowFetch) {
      WaitForCancellation(context);
      return ::grpc::Status(::grpc::StatusCode::CANCELLED, "slow step ended");
    }
    // One fetch per feed, whatever the callable's fetches: feed + 1.
    for (const TensorProto& feed : request->feed()) {
      Tensor value;
      Status parsed = Tensor::FromProto(feed, &value);
      if (!parsed.ok()) return ToWire(parsed);
      TensorProto* fetch = response->add_fetch();
      FloatScalar(value.data<float>()[0] + 1).AsProtoTensorContent(fetch);
      if (options.fetch_size() > 0 && options.fetch(0) == kMalformedFetch) {
        fetch->mutable_tensor_shape()->add_dim()->set_size(4);
        fetch->set_tensor_content("abc");
      }
    }
    return ::grpc::Status::OK;
  }

  ::grpc::Status ReleaseCallable(::grpc::ServerContext*, const ReleaseCallableRequest* request,
                                 ReleaseCallableResponse*) override {
    std::lock_guard<std::mutex> lock(mu_);
    releases_.push_back(request->handle());
    return ::grpc::Status::OK;
  }

  std::mutex mu_;
  int64_t graph_version_ = 7;  // any start: the client must echo what it got
  int64_t next_callable_ = 40;
  std::vector<CreateSessionRequest> creates_;
  std::vector<ExtendSessionRequest> extends_;
  std::vector<RunStepRequest> runs_;
  std::vector<std::string> closes_;
  std::vector<std::string> list_devices_handles_;
  std::vector<ResetRequest> resets_;
  std::vector<MakeCallableRequest> make_callables_;
  std::map<int64_t, CallableOptions> callable_options_;
  std::vector<int64_t> releases_;

 private:
  static void WaitForCancellation(::grpc::ServerContext* context) {
    const auto give_up = steady_clock::now() + kLongestHandlerWait;
    while (!context->IsCancelled() && steady_clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
};

// A FakeMaster served on 127.0.0.1 at a free port.
class GrpcSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", ::grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&master_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now() + milliseconds(200));
  }

  std::string Target() const { return "grpc://127.0.0.1:" + std::to_string(port_); }

  std::unique_ptr<Session> NewGrpcSession(int64_t operation_timeout_ms = 10000) {
    SessionOptions options;
    options.target = Target();
    options.config.set_operation_timeout_in_ms(operation_timeout_ms);
    (*options.config.mutable_device_count())["CPU"] = 3;
    std::unique_ptr<Session> session;
    Status status = NewSession(options, &session);
    EXPECT_TRUE(status.ok()) << status;
    return session;
  }

  // A session whose master session exists (graph "a", "b").
  std::unique_ptr<Session> CreatedSession(int64_t operation_timeout_ms = 10000) {
    std::unique_ptr<Session> session = NewGrpcSession(operation_timeout_ms);
    GraphDef graph;
    AddNode(&graph, "a", "NoOp");
    AddNode(&graph, "b", "NoOp");
    Status status = session->Extend(graph);
    EXPECT_TRUE(status.ok()) << status;
    return session;
  }

  FakeMaster master_;
  int port_ = 0;
  std::unique_ptr<::grpc::Server> server_;
};

std::vector<std::string> NodeNames(const GraphDef& graph) {
  std::vector<std::string> names;
  for (const NodeDef& node : graph.node()) names.push_back(node.name());
  return names;
}

TEST_F(GrpcSessionTest, TheFactoryMakesAGrpcSessionForGrpcTargetsOnly) {
  std::unique_ptr<Session> session = NewGrpcSession();
  EXPECT_NE(dynamic_cast<GrpcSession*>(session.get()), nullptr);
  for (const char* bad : {"grpc://", "grpc://localhost", "grpc://localhost:", "grpc://host:x1",
                          "grpc://host:70000", "grpc://a:1/path"}) {
    SessionOptions options;
    options.target = bad;
    Status status = NewSession(options, &session);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << bad << ": " << status;
  }
  std::string host_port;
  ASSERT_TRUE(ParseGrpcTarget("grpc://[::1]:2222", &host_port).ok());
  EXPECT_EQ(host_port, "[::1]:2222");
}

TEST_F(GrpcSessionTest, CreateThenExtendSendOnlyTheNewNodesWithTheGraphVersion) {
  std::unique_ptr<Session> session = CreatedSession();
  GraphDef second;
  AddNode(&second, "c", "NoOp", {"^a"});
  ASSERT_TRUE(session->Extend(second).ok());
  GraphDef third;
  AddNode(&third, "d", "NoOp");
  AddNode(&third, "e", "NoOp");
  ASSERT_TRUE(session->Extend(third).ok());

  std::lock_guard<std::mutex> lock(master_.mu_);
  ASSERT_EQ(master_.creates_.size(), 1u);
  const CreateSessionRequest& create = master_.creates_[0];
  EXPECT_EQ(NodeNames(create.graph_def()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(create.target(), Target());
  EXPECT_EQ(create.config().operation_timeout_in_ms(), 10000);
  EXPECT_EQ(create.config().device_count().at("CPU"), 3);
  ASSERT_EQ(master_.extends_.size(), 2u);
  EXPECT_EQ(master_.extends_[0].session_handle(), "session-1");
  EXPECT_EQ(NodeNames(master_.extends_[0].graph_def()), (std::vector<std::string>{"c"}));
  EXPECT_EQ(master_.extends_[0].current_graph_version(), 7);
  EXPECT_EQ(NodeNames(master_.extends_[1].graph_def()), (std::vector<std::string>{"d", "e"}));
  EXPECT_EQ(master_.extends_[1].current_graph_version(), 8);
}

TEST_F(GrpcSessionTest, ASecondCreateIsAlreadyExistsAndSendsNothing) {
  std::unique_ptr<Session> session = CreatedSession();
  GraphDef graph;
  AddNode(&graph, "z", "NoOp");
  EXPECT_EQ(session->Create(graph).code(), Code::ALREADY_EXISTS);
  std::lock_guard<std::mutex> lock(master_.mu_);
  EXPECT_EQ(master_.creates_.size(), 1u);
}

TEST_F(GrpcSessionTest, RunBeforeTheSessionExistsIsInvalidArgument) {
  std::unique_ptr<Session> session = NewGrpcSession();
  std::vector<Tensor> outputs;
  EXPECT_EQ(session->Run({}, {"a:0"}, {}, &outputs).code(), Code::INVALID_ARGUMENT);
  std::lock_guard<std::mutex> lock(master_.mu_);
  EXPECT_TRUE(master_.runs_.empty());
}

TEST_F(GrpcSessionTest, RunStepCarriesFeedsFetchesOnceAndTargetsAndReordersTheAnswer) {
  std::unique_ptr<Session> session = CreatedSession();
  std::vector<Tensor> outputs;
  Status status = session->Run({{"x:0", FloatVector({1.5f, 2.5f})}}, {"b:0", "a:0", "b:0"},
                               {"train"}, &outputs);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].data<float>()[0], 'b');
  EXPECT_EQ(outputs[1].data<float>()[0], 'a');
  EXPECT_EQ(outputs[2].data<float>()[0], 'b');

  std::lock_guard<std::mutex> lock(master_.mu_);
  ASSERT_EQ(master_.runs_.size(), 1u);
  const RunStepRequest& run = master_.runs_[0];
  EXPECT_EQ(run.session_handle(), "session-1");
  ASSERT_EQ(run.feed_size(), 1);
  EXPECT_EQ(run.feed(0).name(), "x:0");
  Tensor fed;
  ASSERT_TRUE(Tensor::FromProto(run.feed(0).tensor(), &fed).ok());
  ASSERT_EQ(fed.NumElements(), 2);
  EXPECT_EQ(fed.data<float>()[1], 2.5f);
  EXPECT_FALSE(run.feed(0).tensor().tensor_content().empty());  // as AsProtoTensorContent
  EXPECT_EQ(std::vector<std::string>(run.fetch().begin(), run.fetch().end()),
            (std::vector<std::string>{"b:0", "a:0"}));
  EXPECT_EQ(std::vector<std::string>(run.target().begin(), run.target().end()),
            (std::vector<std::string>{"train"}));
  EXPECT_TRUE(run.store_errors_in_response_body());
  EXPECT_NE(run.request_id(), 0);
  // No RunOptions timeout: the config's operation timeout goes to the master.
  EXPECT_EQ(run.options().timeout_in_ms(), 10000);
  EXPECT_EQ(session->stats().runs, 1);
}

TEST_F(GrpcSessionTest, EachRequestHasItsOwnRequestId) {
  std::unique_ptr<Session> session = CreatedSession();
  std::vector<Tensor> outputs;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(session->Run({}, {"a:0"}, {}, &outputs).ok());
  std::lock_guard<std::mutex> lock(master_.mu_);
  std::set<int64_t> ids;
  for (const RunStepRequest& run : master_.runs_) ids.insert(run.request_id());
  EXPECT_EQ(ids.size(), 3u);
}

TEST_F(GrpcSessionTest, AnErrorInTheResponseBodyKeepsItsCodeAndMessage) {
  std::unique_ptr<Session> session = CreatedSession();
  std::vector<Tensor> outputs;
  Status status = session->Run({}, {"a:0", kBodyErrorFetch}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::NOT_FOUND);
  EXPECT_EQ(status.message(), "no such tensor in the body");
}

TEST_F(GrpcSessionTest, AnErrorAsTheGrpcStatusKeepsItsCodeAndMessage) {
  std::unique_ptr<Session> session = CreatedSession();
  std::vector<Tensor> outputs;
  Status status = session->Run({}, {kGrpcErrorFetch}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION);
  EXPECT_EQ(status.message(), "as the gRPC status");
}

// A master that answers badly gets a clear error, never a crash or a
// tensor in the wrong place.
TEST_F(GrpcSessionTest, BadTensorsFromTheMasterAreClearErrors) {
  std::unique_ptr<Session> session = CreatedSession();
  std::vector<Tensor> outputs;
  Status malformed = session->Run({}, {"a:0", kMalformedFetch}, {}, &outputs);
  EXPECT_EQ(malformed.code(), Code::INVALID_ARGUMENT) << malformed;
  EXPECT_NE(malformed.message().find("Cannot parse the master's RunStep response"),
            std::string::npos)
      << malformed;
  Status stranger = session->Run({}, {kStrangerFetch}, {}, &outputs);
  EXPECT_EQ(stranger.code(), Code::INTERNAL) << stranger;
  EXPECT_NE(stranger.message().find("'not_fetched:0', which was not fetched"), std::string::npos)
      << stranger;
  Status missing = session->Run({}, {"a:0", kMissingFetch}, {}, &outputs);
  EXPECT_EQ(missing.code(), Code::INTERNAL) << missing;
  EXPECT_NE(missing.message().find("no tensor for fetch 'missing:0'"), std::string::npos)
      << missing;
  EXPECT_TRUE(outputs.empty());
}

TEST(GrpcStatusTest, EveryCodeMapsOntoTheSameNumber) {
  for (int code = 1; code <= static_cast<int>(Code::UNAUTHENTICATED); ++code) {
    const Status status(static_cast<Code>(code), "message " + std::to_string(code));
    EXPECT_EQ(FromCodeAndMessage(code, status.message()), status);
    // gRPC numbers its codes the same way.
    const ::grpc::Status wire = ToWire(status);
    EXPECT_EQ(FromCodeAndMessage(wire.error_code(), wire.error_message()), status);
  }
  EXPECT_EQ(static_cast<int>(::grpc::StatusCode::UNAUTHENTICATED),
            static_cast<int>(Code::UNAUTHENTICATED));
  EXPECT_EQ(static_cast<int>(::grpc::StatusCode::DEADLINE_EXCEEDED),
            static_cast<int>(Code::DEADLINE_EXCEEDED));
  EXPECT_TRUE(FromCodeAndMessage(0, "").ok());
  EXPECT_EQ(FromCodeAndMessage(99, "odd").code(), Code::UNKNOWN);
  EXPECT_EQ(FromCodeAndMessage(-1, "odd").code(), Code::UNKNOWN);
}

// Every gRPC status code the fake master answers with reaches the caller
// with the same code and message (the gRPC-status direction).
TEST_F(GrpcSessionTest, EveryCodeFromTheMasterReachesTheCaller) {
  std::unique_ptr<Session> session = CreatedSession();
  std::vector<Tensor> outputs;
  for (int code = 1; code <= static_cast<int>(Code::UNAUTHENTICATED); ++code) {
    Status status = session->Run({}, {"code_" + std::to_string(code) + ":0"}, {}, &outputs);
    EXPECT_EQ(static_cast<int>(status.code()), code) << status;
    EXPECT_EQ(status.message(), "answered with code " + std::to_string(code));
  }
}

TEST_F(GrpcSessionTest, ARunOptionsTimeoutEndsTheCallWithDeadlineExceeded) {
  std::unique_ptr<Session> session = CreatedSession(/*operation_timeout_ms=*/0);
  RunOptions options;
  options.set_timeout_in_ms(200);
  std::vector<Tensor> outputs;
  const auto start = steady_clock::now();
  Status status = session->Run(options, {}, {kSlowFetch}, {}, &outputs);
  const auto elapsed = steady_clock::now() - start;
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_GE(elapsed, milliseconds(190));
  EXPECT_LT(elapsed, milliseconds(3000));
  std::lock_guard<std::mutex> lock(master_.mu_);
  EXPECT_EQ(master_.runs_.back().options().timeout_in_ms(), 200);
}

TEST_F(GrpcSessionTest, TheOperationTimeoutAppliesWhenRunOptionsHaveNone) {
  std::unique_ptr<Session> session = CreatedSession(/*operation_timeout_ms=*/200);
  std::vector<Tensor> outputs;
  const auto start = steady_clock::now();
  Status status = session->Run({}, {kSlowFetch}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::DEADLINE_EXCEEDED) << status;
  EXPECT_LT(steady_clock::now() - start, milliseconds(3000));
}

TEST_F(GrpcSessionTest, ACallableRunHonoursItsRunOptionsTimeout) {
  std::unique_ptr<Session> session = CreatedSession(/*operation_timeout_ms=*/0);
  CallableOptions callable;
  callable.add_fetch(kSlowFetch);
  callable.mutable_run_options()->set_timeout_in_ms(200);
  Session::CallableHandle handle;
  ASSERT_TRUE(session->MakeCallable(callable, &handle).ok());
  std::vector<Tensor> fetches;
  const auto start = steady_clock::now();
  EXPECT_EQ(session->RunCallable(handle, {}, &fetches).code(), Code::DEADLINE_EXCEEDED);
  EXPECT_LT(steady_clock::now() - start, milliseconds(3000));
}

// A loopback port nothing listens on.
int UnusedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

TEST(GrpcSessionUnreachableTest, AMasterThatIsNotThereIsUnavailableFast) {
  SessionOptions options;
  options.target = "grpc://127.0.0.1:" + std::to_string(UnusedPort());  // no timeout set
  std::unique_ptr<Session> session;
  ASSERT_TRUE(NewSession(options, &session).ok());
  GraphDef graph;
  AddNode(&graph, "a", "NoOp");
  const auto start = steady_clock::now();
  Status status = session->Extend(graph);
  EXPECT_EQ(status.code(), Code::UNAVAILABLE) << status;
  EXPECT_LT(steady_clock::now() - start, milliseconds(2000));
  std::vector<DeviceAttributes> devices;
  EXPECT_EQ(session->ListDevices(&devices).code(), Code::UNAVAILABLE);
  options.config.set_operation_timeout_in_ms(5000);
  EXPECT_EQ(Reset(options, {}).code(), Code::UNAVAILABLE);
}

TEST_F(GrpcSessionTest, CloseSendsCloseSessionOnceAndLaterCallsAreCancelled) {
  std::unique_ptr<Session> session = CreatedSession();
  Session::CallableHandle handle;
  CallableOptions callable;
  callable.add_feed("x:0");
  callable.add_fetch("y:0");
  ASSERT_TRUE(session->MakeCallable(callable, &handle).ok());
  ASSERT_TRUE(session->Close().ok());
  ASSERT_TRUE(session->Close().ok());
  {
    std::lock_guard<std::mutex> lock(master_.mu_);
    EXPECT_EQ(master_.closes_, (std::vector<std::string>{"session-1"}));
  }
  std::vector<Tensor> outputs;
  Status status = session->Run({}, {"a:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::CANCELLED);
  EXPECT_EQ(status.message(), "Session has been closed.");
  GraphDef graph;
  AddNode(&graph, "z", "NoOp");
  EXPECT_EQ(session->Extend(graph).code(), Code::CANCELLED);
  EXPECT_EQ(session->MakeCallable(callable, &handle).code(), Code::CANCELLED);
  EXPECT_EQ(session->RunCallable(handle, {FloatScalar(1)}, &outputs).code(), Code::CANCELLED);
  std::vector<DeviceAttributes> devices;
  EXPECT_EQ(session->ListDevices(&devices).code(), Code::CANCELLED);
  // The master released the callables with the session.
  EXPECT_TRUE(session->ReleaseCallable(handle).ok());
  std::lock_guard<std::mutex> lock(master_.mu_);
  EXPECT_TRUE(master_.releases_.empty());
  EXPECT_EQ(master_.runs_.size(), 0u);
}

TEST_F(GrpcSessionTest, CloseCancelsARunInFlight) {
  std::unique_ptr<Session> session = CreatedSession(/*operation_timeout_ms=*/0);
  auto run = std::async(std::launch::async, [&] {
    std::vector<Tensor> outputs;
    return session->Run({}, {kSlowFetch}, {}, &outputs);
  });
  // Close once the master has the step.
  const auto give_up = steady_clock::now() + std::chrono::seconds(5);
  while (steady_clock::now() < give_up) {
    {
      std::lock_guard<std::mutex> lock(master_.mu_);
      if (!master_.runs_.empty()) break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  const auto start = steady_clock::now();
  ASSERT_TRUE(session->Close().ok());
  ASSERT_EQ(run.wait_for(std::chrono::seconds(3)), std::future_status::ready);
  Status status = run.get();
  EXPECT_EQ(status.code(), Code::CANCELLED) << status;
  EXPECT_EQ(status.message(), "Step was cancelled: Session has been closed.");
  EXPECT_LT(steady_clock::now() - start, milliseconds(3000));
}

TEST_F(GrpcSessionTest, ClosingASessionNeverCreatedSendsNothing) {
  std::unique_ptr<Session> session = NewGrpcSession();
  EXPECT_TRUE(session->Close().ok());
  session.reset();
  std::lock_guard<std::mutex> lock(master_.mu_);
  EXPECT_TRUE(master_.closes_.empty());
}

TEST_F(GrpcSessionTest, DeletingAnOpenSessionClosesIt) {
  CreatedSession().reset();
  std::lock_guard<std::mutex> lock(master_.mu_);
  EXPECT_EQ(master_.closes_.size(), 1u);
}

TEST_F(GrpcSessionTest, BadCallableAnswersFromTheMasterAreClearErrors) {
  std::unique_ptr<Session> session = CreatedSession();
  CallableOptions callable;
  callable.add_feed("x:0");
  callable.add_fetch("y:0");
  Session::CallableHandle handle = -1;
  ASSERT_TRUE(session->MakeCallable(callable, &handle).ok());
  std::vector<Tensor> fetches;
  // Two feeds make the fake answer two tensors for the one fetch.
  Status miscounted = session->RunCallable(handle, {FloatScalar(1), FloatScalar(2)}, &fetches);
  EXPECT_EQ(miscounted.code(), Code::INTERNAL) << miscounted;
  EXPECT_NE(miscounted.message().find("2 tensors for a callable with 1 fetches"), std::string::npos)
      << miscounted;
  callable.set_fetch(0, kMalformedFetch);
  ASSERT_TRUE(session->MakeCallable(callable, &handle).ok());
  Status malformed = session->RunCallable(handle, {FloatScalar(1)}, &fetches);
  EXPECT_EQ(malformed.code(), Code::INVALID_ARGUMENT) << malformed;
  EXPECT_NE(malformed.message().find("Cannot parse the master's RunCallable response"),
            std::string::npos)
      << malformed;
  EXPECT_TRUE(fetches.empty());
}

TEST_F(GrpcSessionTest, CallablesGoThroughTheMastersCallableMethods) {
  std::unique_ptr<Session> session = CreatedSession();
  CallableOptions callable;
  callable.add_feed("x:0");
  callable.add_fetch("y:0");
  Session::CallableHandle handle = -1;
  ASSERT_TRUE(session->MakeCallable(callable, &handle).ok());
  EXPECT_EQ(handle, 40);
  std::vector<Tensor> fetches;
  Status status = session->RunCallable(handle, {FloatScalar(2)}, &fetches);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(fetches.size(), 1u);
  EXPECT_EQ(fetches[0].data<float>()[0], 3.0f);
  EXPECT_EQ(session->RunCallable(99, {}, &fetches).code(), Code::INVALID_ARGUMENT);
  EXPECT_TRUE(fetches.empty());
  ASSERT_TRUE(session->ReleaseCallable(handle).ok());
  ASSERT_TRUE(session->ReleaseCallable(handle).ok());  // twice is OK
  EXPECT_EQ(session->ReleaseCallable(99).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(session->RunCallable(handle, {FloatScalar(2)}, &fetches).code(),
            Code::INVALID_ARGUMENT);
  std::lock_guard<std::mutex> lock(master_.mu_);
  ASSERT_EQ(master_.make_callables_.size(), 1u);
  EXPECT_EQ(master_.make_callables_[0].session_handle(), "session-1");
  EXPECT_EQ(master_.make_callables_[0].options().fetch(0), "y:0");
  EXPECT_NE(master_.make_callables_[0].request_id(), 0);
  EXPECT_EQ(master_.releases_, (std::vector<int64_t>{40}));
}

TEST_F(GrpcSessionTest, ListDevicesReturnsLocalThenRemoteDevices) {
  std::unique_ptr<Session> session = CreatedSession();
  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE(session->ListDevices(&devices).ok());
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "/job:master/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(devices[0].device_type, "CPU");
  EXPECT_EQ(devices[0].memory_limit_bytes, 1024);
  EXPECT_EQ(devices[1].name, "/job:worker/replica:0/task:3/device:CPU:0");
  std::lock_guard<std::mutex> lock(master_.mu_);
  EXPECT_EQ(master_.list_devices_handles_, (std::vector<std::string>{"session-1"}));
}

TEST_F(GrpcSessionTest, ListDevicesBeforeAnyGraphCreatesAnEmptySessionFirst) {
  std::unique_ptr<Session> session = NewGrpcSession();
  std::vector<DeviceAttributes> devices;
  ASSERT_TRUE(session->ListDevices(&devices).ok());
  EXPECT_EQ(devices.size(), 2u);
  GraphDef graph;
  AddNode(&graph, "a", "NoOp");
  ASSERT_TRUE(session->Extend(graph).ok());  // now an ExtendSession
  std::lock_guard<std::mutex> lock(master_.mu_);
  ASSERT_EQ(master_.creates_.size(), 1u);
  EXPECT_EQ(master_.creates_[0].graph_def().node_size(), 0);
  EXPECT_EQ(master_.extends_.size(), 1u);
}

TEST_F(GrpcSessionTest, ResetSendsTheContainersAndDeviceFilters) {
  SessionOptions options;
  options.target = Target();
  options.config.set_operation_timeout_in_ms(5000);
  options.config.add_device_filters("/job:ps");
  ASSERT_TRUE(Reset(options, {"c1", "c2"}).ok());
  std::lock_guard<std::mutex> lock(master_.mu_);
  ASSERT_EQ(master_.resets_.size(), 1u);
  EXPECT_EQ(std::vector<std::string>(master_.resets_[0].container().begin(),
                                     master_.resets_[0].container().end()),
            (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(master_.resets_[0].device_filters(0), "/job:ps");
}

// Reset with target "": every live DirectSession's variables go back to
// uninitialized, as TensorFlow's DirectSessionFactory::Reset clears them.
TEST(DirectSessionResetTest, ResetClearsTheVariablesOfLiveSessions) {
  GraphDef graph;
  NodeDef* variable = AddNode(&graph, "v", "VariableV2");
  session_test::SetAttr(variable, "dtype", DT_FLOAT);
  session_test::SetAttr(variable, "shape", PartialTensorShape({}));
  session_test::AddScalar(&graph, "one", 1.0f);
  session_test::SetAttr(AddNode(&graph, "init", "Assign", {"v", "one"}), "T", DT_FLOAT);
  std::unique_ptr<Session> session;
  ASSERT_TRUE(NewSession(SessionOptions(), &session).ok());
  Status created = session->Create(graph);
  ASSERT_TRUE(created.ok()) << created;
  std::vector<Tensor> outputs;
  ASSERT_TRUE(session->Run({}, {"init:0"}, {}, &outputs).ok());
  ASSERT_TRUE(session->Run({}, {"v:0"}, {}, &outputs).ok());
  EXPECT_EQ(outputs[0].data<float>()[0], 1.0f);

  ASSERT_TRUE(Reset(SessionOptions(), {}).ok());
  Status status = session->Run({}, {"v:0"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::FAILED_PRECONDITION) << status;
  // The variable works again once assigned.
  ASSERT_TRUE(session->Run({}, {"init:0"}, {}, &outputs).ok());
  ASSERT_TRUE(session->Run({}, {"v:0"}, {}, &outputs).ok());
  EXPECT_EQ(outputs[0].data<float>()[0], 1.0f);
}

}  // namespace
}  // namespace tensorweave

namespace tensorweave {
namespace {

// The server a ServerDef describes (the other end of a grpc:// target).
TEST(GrpcServerFromServerDefTest, ListensOnLoopbackForLocalhostAndReportsTheBoundPort) {
  ServerDef def;
  def.set_protocol("grpc");
  def.set_job_name("ps");
  def.set_task_index(1);
  JobDef* job = def.mutable_cluster()->add_job();
  job->set_name("ps");
  (*job->mutable_tasks())[0] = "localhost:2222";
  (*job->mutable_tasks())[1] = "localhost:0";
  std::unique_ptr<GrpcServer> server;
  ASSERT_TRUE(GrpcServer::Create(def, &server).ok());
  ASSERT_TRUE(server->Start().ok());
  const int port = server->bound_port();
  ASSERT_GT(port, 0);
  EXPECT_EQ(server->target(), "grpc://localhost:" + std::to_string(port));
  const ServerDef bound = server->server_def();
  EXPECT_EQ(bound.cluster().job(0).tasks().at(1), "localhost:" + std::to_string(port));
  EXPECT_EQ(bound.cluster().job(0).tasks().at(0), "localhost:2222");
  EXPECT_EQ(server->worker_service().devices()[0].name(), "/job:ps/replica:0/task:1/device:CPU:0");

  GrpcServerOptions options;
  ASSERT_TRUE(GrpcServerOptionsFromServerDef(def, &options).ok());
  EXPECT_EQ(options.host, "127.0.0.1");  // never every interface for localhost
  def.set_port(4444);                    // ServerDef.port replaces the address's
  ASSERT_TRUE(GrpcServerOptionsFromServerDef(def, &options).ok());
  EXPECT_EQ(options.port, 4444);

  // Join returns once another thread stops the server.
  auto joined = std::async(std::launch::async, [&] { server->Join(); });
  EXPECT_EQ(joined.wait_for(milliseconds(200)), std::future_status::timeout);
  server->Stop();
  EXPECT_EQ(joined.wait_for(std::chrono::seconds(5)), std::future_status::ready);
}

TEST(GrpcServerFromServerDefTest, SplitHostPortAcceptsIpv6AndRefusesMissingPorts) {
  std::string host;
  int port = -1;
  ASSERT_TRUE(SplitHostPort("[::1]:2222", &host, &port).ok());
  EXPECT_EQ(host, "[::1]");
  EXPECT_EQ(port, 2222);
  for (const char* bad : {"localhost", "localhost:", ":80", "host:65536", "host:8x", "::1:80"}) {
    EXPECT_EQ(SplitHostPort(bad, &host, &port).code(), Code::INVALID_ARGUMENT) << bad;
  }
}

}  // namespace
}  // namespace tensorweave
