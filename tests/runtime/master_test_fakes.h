// Fake workers for the master's tests (master_session_test.cc,
// master_partial_run_test.cc): each records every call and answers with
// canned values, so the tests see exactly what the master asked of which
// task; and a fixture with a Master over a ps and two workers.
#ifndef TENSORWEAVE_TESTS_RUNTIME_MASTER_TEST_FAKES_H_
#define TENSORWEAVE_TESTS_RUNTIME_MASTER_TEST_FAKES_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/distributed/master.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace master_test {

using session_test::AddAffine;
using session_test::AddPlaceholder;
using session_test::FloatScalar;

constexpr char kWorker0[] = "/job:worker/replica:0/task:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1";
constexpr char kPs0[] = "/job:ps/replica:0/task:0";

inline std::string Cpu0(const std::string& task) { return task + "/device:CPU:0"; }

// A worker that records every call. RunGraph answers each recv_key with
// `fetch_value` unless `run_graph` says otherwise.
class FakeWorker : public WorkerInterface {
 public:
  using RunGraphHandler =
      std::function<void(CallOptions*, const RunGraphInput*, RunGraphOutput*, StatusCallback)>;

  FakeWorker(std::string task, uint64_t incarnation) : task_(std::move(task)) {
    proto::DeviceAttributes device;
    device.set_name(Cpu0(task_));
    device.set_device_type("CPU");
    device.set_incarnation(incarnation);
    devices_.push_back(device);
  }

  uint64_t incarnation() const { return devices_[0].incarnation(); }
  // Guards the records below while calls may still come in.
  std::mutex& mu() { return mu_; }
  // For polling while calls may still come in (the vectors below are read
  // only once they have).
  size_t num_runs() {
    std::lock_guard<std::mutex> lock(mu_);
    return runs.size();
  }

  void GetStatusAsync(CallOptions* call, const GetStatusRequest* request,
                      GetStatusResponse* response, StatusCallback done) override {
    if (!running) return done(errors::Unavailable("Connection refused: ", task_));
    for (const auto& device : devices_) *response->add_device_attributes() = device;
    done(Status::OK());
  }
  void CreateWorkerSessionAsync(CallOptions* call, const CreateWorkerSessionRequest* request,
                                CreateWorkerSessionResponse* response,
                                StatusCallback done) override {
    Record([&] { create_sessions.push_back(*request); });
    done(Status::OK());
  }
  void DeleteWorkerSessionAsync(CallOptions* call, const DeleteWorkerSessionRequest* request,
                                DeleteWorkerSessionResponse* response,
                                StatusCallback done) override {
    Record([&] { deleted_sessions.push_back(request->session_handle()); });
    done(Status::OK());
  }
  void RegisterGraphAsync(CallOptions* call, const RegisterGraphRequest* request,
                          RegisterGraphResponse* response, StatusCallback done) override {
    Record([&] {
      const std::string handle = StrCat(task_, "#graph", registered.size());
      registered[handle] = *request;
      response->set_graph_handle(handle);
    });
    done(Status::OK());
  }
  void DeregisterGraphAsync(CallOptions* call, const DeregisterGraphRequest* request,
                            DeregisterGraphResponse* response, StatusCallback done) override {
    Record([&] { deregistered.insert(request->graph_handle()); });
    done(Status::OK());
  }
  void RunGraphAsync(CallOptions* call, const RunGraphInput* input, RunGraphOutput* output,
                     StatusCallback done) override {
    Record([&] {
      // Recorded as the message on the wire would be.
      RunGraphRequest request = input->request;
      for (const auto& [key, value] : input->sends) {
        NamedTensorProto* send = request.add_send();
        send->set_name(key);
        value.AsProtoTensorContent(send->mutable_tensor());
      }
      runs.push_back(std::move(request));
      caller_waits.push_back(input->caller_waits);
    });
    if (run_graph) return run_graph(call, input, output, std::move(done));
    for (const std::string& key : input->request.recv_key()) {
      output->recvs.emplace_back(key, fetch_value);
    }
    done(Status::OK());
  }
  void CleanupGraphAsync(CallOptions* call, const CleanupGraphRequest* request,
                         CleanupGraphResponse* response, StatusCallback done) override {
    if (cleanup_delay_ms == 0) {
      Record([&] { cleaned_steps.push_back(request->step_id()); });
      return done(Status::OK());
    }
    std::thread([this, step_id = request->step_id(), done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(cleanup_delay_ms));
      Record([&] { cleaned_steps.push_back(step_id); });
      done(Status::OK());
    }).detach();
  }
  void CleanupAllAsync(CallOptions* call, const CleanupAllRequest* request,
                       CleanupAllResponse* response, StatusCallback done) override {
    Record([&] { cleanup_all.push_back(*request); });
    done(Status::OK());
  }
  void RecvTensorAsync(CallOptions* call, const RecvTensorRequest* request,
                       RecvTensorResponse* response, StatusCallback done) override {
    done(errors::Unimplemented("a master never calls RecvTensor"));
  }

  // What the worker was asked; read after the calls finished.
  std::vector<CreateWorkerSessionRequest> create_sessions;
  std::vector<std::string> deleted_sessions;
  std::map<std::string, RegisterGraphRequest> registered;  // by graph handle
  std::set<std::string> deregistered;
  std::vector<RunGraphRequest> runs;
  std::vector<bool> caller_waits;  // per run
  std::vector<int64_t> cleaned_steps;
  std::vector<CleanupAllRequest> cleanup_all;

  std::atomic<bool> running{true};
  int cleanup_delay_ms = 0;  // > 0: CleanupGraph answers that late, from another thread
  Tensor fetch_value = FloatScalar(7.0f);
  RunGraphHandler run_graph;

 private:
  template <typename Fn>
  void Record(Fn fn) {
    std::lock_guard<std::mutex> lock(mu_);
    fn();
  }

  const std::string task_;
  std::vector<proto::DeviceAttributes> devices_;
  std::mutex mu_;
};

// The fake workers of one cluster; caches made by the factory share them.
class FakeCluster {
 public:
  FakeCluster() {
    uint64_t incarnation = 0x1001;
    for (const char* task : {kPs0, kWorker0, kWorker1}) {
      workers_[task] = std::make_unique<FakeWorker>(task, incarnation++);
    }
    for (const auto& [job, tasks] : std::map<std::string, int>{{"ps", 1}, {"worker", 2}}) {
      JobDef* def = cluster_.add_job();
      def->set_name(job);
      for (int i = 0; i < tasks; ++i) (*def->mutable_tasks())[i] = StrCat("fake-", job, i, ":1");
    }
  }

  FakeWorker* worker(const std::string& task) { return workers_.at(task).get(); }
  const ClusterDef& cluster() const { return cluster_; }

  MasterOptions Options() {
    MasterOptions options;
    *options.server_def.mutable_cluster() = cluster_;
    options.server_def.set_job_name("worker");
    options.server_def.set_task_index(0);
    options.worker_cache_factory = [this](const ClusterDef& cluster,
                                          std::unique_ptr<WorkerCacheInterface>* cache) {
      cache->reset(new Cache(this, cluster));
      return Status::OK();
    };
    return options;
  }

 private:
  class Cache : public WorkerCacheInterface {
   public:
    // Only the tasks `def` names are reachable through this cache.
    Cache(FakeCluster* cluster, const ClusterDef& def) : cluster_(cluster) {
      for (const JobDef& job : def.job()) {
        for (const auto& task : job.tasks()) {
          tasks_.insert(StrCat("/job:", job.name(), "/replica:0/task:", task.first));
        }
      }
    }
    void ListWorkers(std::vector<std::string>* tasks) const override {
      tasks->assign(tasks_.begin(), tasks_.end());
    }
    WorkerInterface* GetOrCreateWorker(const std::string& task) override {
      return tasks_.count(task) == 0 ? nullptr : cluster_->workers_.at(task).get();
    }

   private:
    FakeCluster* cluster_;
    std::set<std::string> tasks_;
  };

  std::map<std::string, std::unique_ptr<FakeWorker>> workers_;
  ClusterDef cluster_;
};

// x (fed) → ps_part on /job:ps/task:0 → y (no request: the client's task).
inline GraphDef SplitGraph() {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  AddAffine(&graph, "ps_part", "x", 2.0f, 0.0f, "/job:ps/task:0");
  AddAffine(&graph, "y", "ps_part", 1.0f, 1.0f);
  return graph;
}

class MasterSessionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(Master::Create(cluster_.Options(), &master_).ok()); }

  std::string CreateSession(const GraphDef& graph, ConfigProto config = ConfigProto()) {
    CreateSessionRequest request;
    *request.mutable_graph_def() = graph;
    if (config.operation_timeout_in_ms() == 0) config.set_operation_timeout_in_ms(5000);
    *request.mutable_config() = config;
    CreateSessionResponse response;
    Status status = master_->CreateSession(request, &response);
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_EQ(response.graph_version(), 0);
    return response.session_handle();
  }

  Status Run(const std::string& handle, const std::vector<std::string>& fetches,
             RunStepResponse* response, const std::vector<std::string>& feeds = {"x:0"},
             int64_t timeout_ms = 0) {
    RunStepRequest request;
    request.set_session_handle(handle);
    for (const std::string& feed : feeds) {
      NamedTensorProto* named = request.add_feed();
      named->set_name(feed);
      FloatScalar(3.0f).AsProtoTensorContent(named->mutable_tensor());
    }
    for (const std::string& fetch : fetches) request.add_fetch(fetch);
    if (timeout_ms > 0) request.mutable_options()->set_timeout_in_ms(timeout_ms);
    return RunStepWithProtos(request, response);
  }

  // Master::RunStep with the tensors in the protos, as the wire has them.
  Status RunStepWithProtos(const RunStepRequest& request, RunStepResponse* response) {
    RunStepRequest rest = request;
    rest.clear_feed();
    NamedTensors feeds;
    for (const NamedTensorProto& feed : request.feed()) {
      Tensor value;
      TW_RETURN_IF_ERROR(Tensor::FromProto(feed.tensor(), &value));
      feeds.emplace_back(feed.name(), value);
    }
    NamedTensors fetched;
    TW_RETURN_IF_ERROR(master_->RunStep(rest, feeds, response, &fetched));
    for (const auto& [name, value] : fetched) {
      NamedTensorProto* out = response->add_tensor();
      out->set_name(name);
      value.AsProtoTensorContent(out->mutable_tensor());
    }
    return Status::OK();
  }

  // Master::RunCallable likewise.
  Status RunCallableWithProtos(const RunCallableRequest& request, RunCallableResponse* response) {
    RunCallableRequest rest = request;
    rest.clear_feed();
    std::vector<Tensor> feeds;
    for (const TensorProto& feed : request.feed()) {
      TW_RETURN_IF_ERROR(Tensor::FromProto(feed, &feeds.emplace_back()));
    }
    std::vector<Tensor> fetched;
    TW_RETURN_IF_ERROR(master_->RunCallable(rest, feeds, response, &fetched));
    for (const Tensor& value : fetched) value.AsProtoTensorContent(response->add_fetch());
    return Status::OK();
  }

  FakeCluster cluster_;
  std::unique_ptr<Master> master_;
};

}  // namespace master_test
}  // namespace tensorweave

#endif  // TENSORWEAVE_TESTS_RUNTIME_MASTER_TEST_FAKES_H_
