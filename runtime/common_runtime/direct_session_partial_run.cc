// DirectSession's partial runs (TensorFlow's PRunSetup/PRun): one step fed
// and fetched over several calls.
//
//   std::string handle;
//   TW_RETURN_IF_ERROR(session->PRunSetup({"a:0", "b:0"}, {"c:0", "d:0"}, {}, &handle));
//   TW_RETURN_IF_ERROR(session->PRun(handle, {{"a:0", a}}, {"c:0"}, &outputs));  // c(a)
//   TW_RETURN_IF_ERROR(session->PRun(handle, {{"b:0", b}}, {"d:0"}, &outputs));  // d(c, b)
//
// The signature is compiled in TensorFlow's client-terminated form (feeds
// are _Recv and fetches _Send nodes on the session's first device, see
// subgraph.h), so its executors start at setup and wait in their _Recv
// nodes; each PRun sends its feeds into the step's rendezvous (the waiting
// kernels continue on the calling thread) and receives its fetches from
// it. The step's state lives in a PartialRun until its last feed and fetch
// were used and its executors finished.
#include <condition_variable>
#include <set>
#include <utility>

#include "runtime/common_runtime/direct_session.h"
#include "runtime/common_runtime/direct_session_internal.h"
#include "runtime/common_runtime/partial_run_check.h"

namespace tensorweave {

struct DirectSession::PartialRun {
  explicit PartialRun(int64_t step_id) : step_container(step_id) {}

  const ExecutorsAndKeys* executors = nullptr;
  SignatureEndpoints endpoints;
  // Declared feeds and fetches by canonical name ("x:0"), with the feed's
  // position among the compiled feeds (for its dtype and shape).
  std::map<std::string, int> feed_position;
  std::set<std::string> declared_fetches;

  Step step;
  ScopedStepContainer step_container;
  Executor::Args args;

  std::mutex mu;
  std::condition_variable cv;
  std::set<std::string> pending_feeds;    // guarded by mu
  std::set<std::string> pending_fetches;  // guarded by mu
  int executors_running = 0;              // guarded by mu
  Status executors_status;                // guarded by mu
  bool step_ended = false;                // guarded by mu; executors done and step unregistered
};

namespace {

std::string CanonicalName(const TensorId& id) { return TensorIdString(id); }

// Parses `names`, INVALID_ARGUMENT for a malformed one.
Status ParseNames(const std::vector<std::string>& names, std::vector<TensorId>* ids) {
  ids->resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (!ParseTensorName(names[i], &(*ids)[i]) || (*ids)[i].index < 0) {
      return errors::InvalidArgument("Malformed tensor name '", names[i], "'");
    }
  }
  return Status::OK();
}

// The partial run's key in the executor cache: a byte no tensor name
// holds keeps it apart from Run's keys.
std::string PartialRunKey(const std::vector<std::string>& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets) {
  RunSignature signature{feeds, fetches, targets};
  std::string key;
  signature.Key(&key);
  return std::string("\x01partial\x01") + key;
}

}  // namespace

Status DirectSession::PRunSetup(const std::vector<std::string>& input_names,
                                const std::vector<std::string>& output_names,
                                const std::vector<std::string>& target_nodes, std::string* handle) {
  if (closed_.load(std::memory_order_acquire)) return errors::Cancelled("Session has been closed.");
  if (output_names.empty() && target_nodes.empty()) {
    return errors::InvalidArgument("A partial run needs at least one fetch or target");
  }
  FeedFetchSignature signature;
  TW_RETURN_IF_ERROR(ParseSignature(input_names, output_names, target_nodes, &signature));
  const SignatureEndpoints endpoints{devices_[0]->name(), devices_[0]->incarnation()};

  const ExecutorsAndKeys* executors = nullptr;
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    if (!graph_created_) {
      return errors::FailedPrecondition("Session has no graph: call Create before PRunSetup");
    }
    const std::string key = PartialRunKey(input_names, output_names, target_nodes);
    auto found = partial_run_executors_.find(key);
    if (found != partial_run_executors_.end()) {
      executors = found->second;
    } else {
      std::unique_ptr<ExecutorsAndKeys> built;
      std::vector<int> output_to_retval;
      TW_RETURN_IF_ERROR(
          Build(input_names, output_names, target_nodes, endpoints, &built, &output_to_retval));
      executors_built_.fetch_add(1, std::memory_order_relaxed);
      executors = built.get();
      partial_run_executors_.emplace(key, executors);
      built_.push_back(std::move(built));
    }
  }

  const int64_t step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  auto run = std::make_shared<PartialRun>(step_id);
  run->executors = executors;
  run->endpoints = endpoints;
  for (size_t i = 0; i < signature.feeds.size(); ++i) {
    const std::string name = CanonicalName(signature.feeds[i]);
    run->feed_position[name] = static_cast<int>(i);
    run->pending_feeds.insert(name);
  }
  for (const TensorId& fetch : signature.fetches) {
    run->declared_fetches.insert(CanonicalName(fetch));
    run->pending_fetches.insert(CanonicalName(fetch));
  }
  Executor::Args& args = run->args;
  args.step_id = step_id;
  args.rendezvous = &run->step.rendezvous;
  args.cancellation_manager = &run->step.cancellation;
  args.runner = &runner_;
  args.cancelled = &run->step.cancelled;
  args.step_container = &run->step_container;
  if (operation_timeout_ms_ > 0 && operation_timeout_ms_ <= kLongestTimeoutMs) {
    args.deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(operation_timeout_ms_);
  }

  *handle = std::to_string(step_id);
  {
    std::lock_guard<std::mutex> lock(partial_runs_mu_);
    partial_runs_.emplace(*handle, run);
  }
  if (!RegisterStep(&run->step)) {
    std::lock_guard<std::mutex> lock(partial_runs_mu_);
    partial_runs_.erase(*handle);
    return errors::Cancelled("Session has been closed.");
  }
  runs_.fetch_add(1, std::memory_order_relaxed);
  run->executors_running = static_cast<int>(executors->parts.size());
  for (const ExecutorsAndKeys::Part& part : executors->parts) {
    // The callback keeps the run alive: it may end after its last PRun
    // forgot the handle (or after the session dropped it when closed).
    part.executor->RunAsync(args, [this, run](const Status& status) {
      bool last = false;
      {
        std::lock_guard<std::mutex> lock(run->mu);
        run->executors_status.Update(status);
        last = --run->executors_running == 0;
      }
      if (!last) return;
      // Not on this thread: Close may be running this callback from inside
      // CancelStep, holding steps_mu_, which UnregisterStep takes. Once
      // unregistered, the session may go away: nothing of it is touched
      // after that.
      runner_([this, run] {
        UnregisterStep(&run->step);
        std::lock_guard<std::mutex> lock(run->mu);
        run->step_ended = true;
        run->cv.notify_all();
      });
    });
  }
  return Status::OK();
}

Status DirectSession::FindPartialRun(const std::string& handle, std::shared_ptr<PartialRun>* run) {
  std::lock_guard<std::mutex> lock(partial_runs_mu_);
  auto found = partial_runs_.find(handle);
  if (found == partial_runs_.end()) {
    return errors::InvalidArgument("Must run 'setup' before performing partial runs!");
  }
  *run = found->second;
  return Status::OK();
}

Status DirectSession::CheckFetchesComputable(const PartialRun& run,
                                             const std::vector<TensorId>& feeding,
                                             const std::vector<TensorId>& fetches) {
  std::set<std::string> missing = run.pending_feeds;
  for (const TensorId& id : feeding) missing.erase(CanonicalName(id));
  if (missing.empty()) return Status::OK();
  std::vector<std::string> fetch_nodes;
  for (const TensorId& id : fetches) fetch_nodes.push_back(id.node);
  std::lock_guard<std::mutex> lock(graph_mu_);
  return CheckPartialRunFetchesComputable(*graph_, missing, run.feed_position, fetch_nodes);
}

Status DirectSession::PRun(const std::string& handle,
                           const std::vector<std::pair<std::string, Tensor>>& inputs,
                           const std::vector<std::string>& output_names,
                           std::vector<Tensor>* outputs) {
  outputs->clear();
  if (closed_.load(std::memory_order_acquire)) return errors::Cancelled("Session has been closed.");
  std::shared_ptr<PartialRun> run;
  TW_RETURN_IF_ERROR(FindPartialRun(handle, &run));
  std::vector<std::string> input_names;
  for (const auto& input : inputs) input_names.push_back(input.first);
  std::vector<TensorId> feeds, fetches;
  TW_RETURN_IF_ERROR(ParseNames(input_names, &feeds));
  TW_RETURN_IF_ERROR(ParseNames(output_names, &fetches));

  const ExecutorsAndKeys& executors = *run->executors;
  bool finished = false;
  {
    std::lock_guard<std::mutex> lock(run->mu);
    std::set<std::string> feeding;
    for (size_t i = 0; i < feeds.size(); ++i) {
      const std::string name = CanonicalName(feeds[i]);
      auto position = run->feed_position.find(name);
      if (position == run->feed_position.end()) {
        return errors::InvalidArgument("The feed ", input_names[i],
                                       " was not specified in partial_run_setup.");
      }
      if (run->pending_feeds.count(name) == 0 || !feeding.insert(name).second) {
        return errors::InvalidArgument("The feed ", input_names[i], " has already been fed.");
      }
      const Tensor& value = inputs[i].second;
      const int at = position->second;
      if (value.dtype() != executors.feed_dtypes[at]) {
        return errors::InvalidArgument("Cannot feed a ", DataTypeString(value.dtype()),
                                       " value for tensor '", input_names[i], "', which is ",
                                       DataTypeString(executors.feed_dtypes[at]));
      }
      if (!value.IsInitialized()) {
        return errors::InvalidArgument("The value fed for tensor '", input_names[i],
                                       "' has no data");
      }
      if (executors.check_shape[at] && !executors.feed_shapes[at].IsCompatibleWith(value.shape())) {
        return errors::InvalidArgument("Cannot feed a value of shape ", value.shape().DebugString(),
                                       " for tensor '", input_names[i], "', which has shape ",
                                       executors.feed_shapes[at].DebugString());
      }
    }
    std::set<std::string> fetching;
    for (size_t i = 0; i < fetches.size(); ++i) {
      const std::string name = CanonicalName(fetches[i]);
      if (run->declared_fetches.count(name) == 0) {
        return errors::InvalidArgument("The fetch ", output_names[i],
                                       " was not specified in partial_run_setup.");
      }
      if (run->pending_fetches.count(name) == 0 || !fetching.insert(name).second) {
        return errors::InvalidArgument("The fetch ", output_names[i], " has already been fetched.");
      }
    }
    TW_RETURN_IF_ERROR(CheckFetchesComputable(*run, feeds, fetches));
    for (const std::string& name : feeding) run->pending_feeds.erase(name);
    for (const std::string& name : fetching) run->pending_fetches.erase(name);
    finished = run->pending_feeds.empty() && run->pending_fetches.empty();
  }

  // Feeding may run the kernels waiting for the values on this thread.
  Status status;
  for (size_t i = 0; i < feeds.size() && status.ok(); ++i) {
    status = run->step.rendezvous.Send(ClientTerminatedKey(run->endpoints, feeds[i]),
                                       inputs[i].second, /*is_dead=*/false);
  }

  // The fetches: each arrives when its _Send ran, or with the step's error.
  struct Received {
    std::mutex mu;
    std::condition_variable cv;
    int pending = 0;
    Status status;
    std::vector<Tensor> values;
  };
  auto received = std::make_shared<Received>();
  received->values.resize(fetches.size());
  received->pending = status.ok() ? static_cast<int>(fetches.size()) : 0;
  for (size_t i = 0; status.ok() && i < fetches.size(); ++i) {
    run->step.rendezvous.RecvAsync(
        ClientTerminatedKey(run->endpoints, fetches[i]),
        [received, i](const Status& recv_status, const Tensor& value, bool is_dead) {
          std::lock_guard<std::mutex> lock(received->mu);
          if (!recv_status.ok()) {
            received->status.Update(recv_status);
          } else if (is_dead) {
            received->status.Update(errors::InvalidArgument(
                "The fetched tensor does not have value (it is dead: it comes from the untaken "
                "branch of a conditional)"));
          } else {
            received->values[i] = value;
          }
          if (--received->pending == 0) received->cv.notify_all();
        });
  }
  {
    std::unique_lock<std::mutex> lock(received->mu);
    received->cv.wait(lock, [&received] { return received->pending == 0; });
    status.Update(received->status);
  }

  if (finished || !status.ok()) {
    // The step is over (or failed): wait for its executors, report their
    // error first (it names the node), and forget the handle.
    if (!status.ok()) CancelStep(&run->step, status);
    {
      std::unique_lock<std::mutex> lock(run->mu);
      run->cv.wait(lock, [&run] { return run->step_ended; });
      if (!run->executors_status.ok()) status = run->executors_status;
    }
    std::lock_guard<std::mutex> lock(partial_runs_mu_);
    partial_runs_.erase(handle);
  }
  if (status.ok()) *outputs = std::move(received->values);
  return status;
}

}  // namespace tensorweave
