// MasterSession's partial runs (TensorFlow's PartialRunSetup RPC and RunStep
// with a partial_run_handle): one step of the declared feeds, fetches and
// targets, fed and fetched over several RunStep calls.
//
//   PartialRunSetup(feed {a, b}, fetch {c, d})   → handle "0", step id S
//   RunStep(handle "0", feed a, fetch c)          → RunGraph(S, is_partial) on
//                                                   every partition (starts them)
//   RunStep(handle "0", feed b, fetch d)          → RunGraph(S, is_partial,
//                                                   is_last_partial_run) on every
//                                                   partition; CleanupGraph(S)
//
// The signature compiles as for Run (the same cached partitions): feeds and
// fetches sit in the client task's partition, so calls after the first
// reach only that one until the last, which every partition gets so that
// each worker waits for its executors and forgets the step.
#include <algorithm>
#include <set>
#include <utility>

#include "runtime/common_runtime/partial_run_check.h"
#include "runtime/common_runtime/run_signature.h"
#include "runtime/distributed/master_session.h"
#include "runtime/distributed/master_session_internal.h"

namespace tensorweave {

using master_session_internal::CanonicalTensorName;
using master_session_internal::kClosedMessage;
using master_session_internal::kLongestTimeoutMs;

struct MasterSession::PartialRun {
  std::shared_ptr<const CacheEntry> entry;
  int64_t step_id = 0;
  // Declared feeds by canonical name ("x:0") → the graph's feed index;
  // declared fetches likewise.
  std::map<std::string, int> feeds;
  std::map<std::string, int> fetches;

  std::mutex mu;
  std::set<std::string> pending_feeds;    // guarded by mu
  std::set<std::string> pending_fetches;  // guarded by mu
  std::vector<bool> started;              // guarded by mu; partitions a call reached
};

Status MasterSession::PartialRunSetup(const PartialRunSetupRequest& request,
                                      PartialRunSetupResponse* response) {
  {
    std::lock_guard<std::mutex> lock(steps_mu_);
    if (closed_) return errors::Cancelled(kClosedMessage);
  }
  if (request.fetch_size() == 0 && request.target_size() == 0) {
    return errors::InvalidArgument("A partial run needs at least one fetch or target");
  }
  auto run = std::make_shared<PartialRun>();
  TW_RETURN_IF_ERROR(Prepare({request.feed().begin(), request.feed().end()},
                             {request.fetch().begin(), request.fetch().end()},
                             {request.target().begin(), request.target().end()}, &run->entry));
  const ClientGraph& graph = *run->entry->graph;
  for (const std::string& name : request.feed()) {
    const std::string canonical = CanonicalTensorName(name);
    run->feeds[canonical] = graph.feed_index.at(canonical);
    run->pending_feeds.insert(canonical);
  }
  for (const std::string& name : request.fetch()) {
    const std::string canonical = CanonicalTensorName(name);
    run->fetches[canonical] = graph.fetch_index.at(canonical);
    run->pending_fetches.insert(canonical);
  }
  run->started.assign(graph.partitions.size(), false);
  run->step_id = static_cast<int64_t>(NewRandomId() >> 1);  // positive, as TensorFlow's
  std::lock_guard<std::mutex> lock(partial_runs_mu_);
  const std::string handle = std::to_string(next_partial_run_handle_++);
  partial_runs_.emplace(handle, std::move(run));
  response->set_partial_run_handle(handle);
  return Status::OK();
}

Status MasterSession::UsePartialRunNames(PartialRun* run,
                                         const std::vector<std::string>& feed_names,
                                         const NamedTensors& feeds,
                                         const std::vector<std::string>& fetch_names, bool* last) {
  const ClientGraph& graph = *run->entry->graph;
  std::lock_guard<std::mutex> lock(run->mu);
  // DirectSession's checks and words, so a client sees the same errors
  // from a local and a remote session.
  std::set<std::string> feeding;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const std::string canonical = CanonicalTensorName(feed_names[i]);
    auto declared = run->feeds.find(canonical);
    if (declared == run->feeds.end()) {
      return errors::InvalidArgument("The feed ", feed_names[i],
                                     " was not specified in partial_run_setup.");
    }
    if (run->pending_feeds.count(canonical) == 0 || !feeding.insert(canonical).second) {
      return errors::InvalidArgument("The feed ", feed_names[i], " has already been fed.");
    }
    const Tensor& value = feeds[i].second;
    const int feed = declared->second;
    if (value.dtype() != graph.feed_dtypes[feed]) {
      return errors::InvalidArgument("Cannot feed a ", DataTypeString(value.dtype()),
                                     " value for tensor '", feed_names[i], "', which is ",
                                     DataTypeString(graph.feed_dtypes[feed]));
    }
    const PartialTensorShape& shape = graph.feed_shapes[feed];
    if (!shape.unknown_rank() && !shape.IsCompatibleWith(value.shape())) {
      return errors::InvalidArgument("Cannot feed a value of shape ", value.shape().DebugString(),
                                     " for tensor '", feed_names[i], "', which has shape ",
                                     shape.DebugString());
    }
  }
  std::set<std::string> fetching;
  std::vector<std::string> canonical_fetches;
  for (const std::string& name : fetch_names) {
    const std::string canonical = CanonicalTensorName(name);
    if (run->fetches.count(canonical) == 0) {
      return errors::InvalidArgument("The fetch ", name,
                                     " was not specified in partial_run_setup.");
    }
    if (run->pending_fetches.count(canonical) == 0 || !fetching.insert(canonical).second) {
      return errors::InvalidArgument("The fetch ", name, " has already been fetched.");
    }
    canonical_fetches.push_back(canonical);
  }
  TW_RETURN_IF_ERROR(CheckFetchesComputable(*run, feeding, canonical_fetches));
  for (const std::string& name : feeding) run->pending_feeds.erase(name);
  for (const std::string& name : fetching) run->pending_fetches.erase(name);
  *last = run->pending_feeds.empty() && run->pending_fetches.empty();
  return Status::OK();
}

Status MasterSession::CheckFetchesComputable(const PartialRun& run,
                                             const std::set<std::string>& feeding,
                                             const std::vector<std::string>& fetches) const {
  std::set<std::string> missing = run.pending_feeds;  // the caller holds run.mu
  for (const std::string& name : feeding) missing.erase(name);
  if (missing.empty()) return Status::OK();
  std::vector<std::string> fetch_nodes;
  for (const std::string& name : fetches) {
    TensorId id;
    if (ParseTensorName(name, &id)) fetch_nodes.push_back(id.node);
  }
  std::lock_guard<std::mutex> lock(graph_mu_);
  return CheckPartialRunFetchesComputable(*graph_, missing, run.feeds, fetch_nodes);
}

Status MasterSession::RunPartial(const RunStepRequest& request, const NamedTensors& feeds,
                                 RunStepResponse* response, NamedTensors* fetched) {
  if (request.feed_size() > 0) {
    return errors::InvalidArgument("RunStep takes its fed values as tensors, not in request.feed");
  }
  if (request.target_size() > 0) {
    return errors::InvalidArgument(
        "A partial run's targets are given at setup, not in its RunStep calls");
  }
  std::shared_ptr<PartialRun> run;
  {
    std::lock_guard<std::mutex> lock(partial_runs_mu_);
    auto found = partial_runs_.find(request.partial_run_handle());
    if (found == partial_runs_.end()) {
      return errors::InvalidArgument("Must run 'setup' before performing partial runs!");
    }
    run = found->second;
  }
  std::vector<std::string> feed_names;
  for (const auto& feed : feeds) feed_names.push_back(feed.first);
  const std::vector<std::string> fetch_names(request.fetch().begin(), request.fetch().end());
  for (const std::vector<std::string>* names :
       std::vector<const std::vector<std::string>*>{&feed_names, &fetch_names}) {
    for (const std::string& name : *names) {
      TensorId id;
      if (!ParseTensorName(name, &id) || id.index < 0) {
        return errors::InvalidArgument("Malformed tensor name '", name, "'");
      }
    }
  }
  bool last = false;
  TW_RETURN_IF_ERROR(UsePartialRunNames(run.get(), feed_names, feeds, fetch_names, &last));

  const ClientGraph& graph = *run->entry->graph;
  int64_t timeout_ms = request.options().timeout_in_ms() > 0 ? request.options().timeout_in_ms()
                                                             : operation_timeout_ms_;
  if (timeout_ms > kLongestTimeoutMs) timeout_ms = 0;
  Step step(graph.partitions.size());
  for (size_t i = 0; i < feeds.size(); ++i) {
    const int feed = run->feeds.at(CanonicalTensorName(feed_names[i]));
    const int partition = graph.feed_partition[feed];
    if (partition < 0) continue;  // pruned away: nothing waits for it
    step.calls[partition].input.sends.emplace_back(graph.feed_keys[feed], feeds[i].second);
  }
  std::vector<int> fetch_of_name;
  for (const std::string& name : fetch_names) {
    const int fetch = run->fetches.at(CanonicalTensorName(name));
    fetch_of_name.push_back(fetch);
    step.calls[graph.fetch_partition[fetch]].input.request.add_recv_key(graph.fetch_keys[fetch]);
  }
  // The first call starts every partition, the last one ends every
  // partition; between them only the partitions with values to move.
  std::vector<size_t> partitions;
  {
    std::lock_guard<std::mutex> lock(run->mu);
    for (size_t p : graph.run_order) {
      const Step::Call& call = step.calls[p];
      const bool moves_values = !call.input.sends.empty() || call.input.request.recv_key_size() > 0;
      if (!run->started[p] || last || moves_values) {
        run->started[p] = true;
        partitions.push_back(p);
      }
    }
  }
  for (size_t p : partitions) {
    RunGraphRequest& call = step.calls[p].input.request;
    call.set_session_handle(options_.handle);
    call.set_create_worker_session_called(true);
    call.set_graph_handle(graph.partitions[p].graph_handle);
    call.set_step_id(run->step_id);
    call.set_is_partial(true);
    call.set_is_last_partial_run(last);
    if (timeout_ms > 0) step.calls[p].options.SetTimeout(timeout_ms);
  }

  const Status status = RunCalls(graph, partitions, timeout_ms, &step);
  // A failed call ends the step on every worker (their executors would wait
  // for feeds forever), as does the last one.
  if (!status.ok() || last) EndPartialRun(request.partial_run_handle());
  UnregisterStep(&step);
  TW_RETURN_IF_ERROR(status);

  fetched->clear();
  for (size_t i = 0; i < fetch_names.size(); ++i) {
    const int fetch = fetch_of_name[i];
    const NamedTensors& received = step.calls[graph.fetch_partition[fetch]].output.recvs;
    auto it = std::find_if(received.begin(), received.end(), [&](const auto& value) {
      return value.first == graph.fetch_keys[fetch];
    });
    if (it == received.end()) {
      return errors::Internal("Worker ", graph.partitions[graph.fetch_partition[fetch]].task,
                              " did not return fetched tensor ", graph.fetch_keys[fetch]);
    }
    fetched->emplace_back(fetch_names[i], it->second);
  }
  return Status::OK();
}

void MasterSession::EndPartialRun(const std::string& handle) {
  std::shared_ptr<PartialRun> run;
  {
    std::lock_guard<std::mutex> lock(partial_runs_mu_);
    auto found = partial_runs_.find(handle);
    if (found == partial_runs_.end()) return;
    run = std::move(found->second);
    partial_runs_.erase(found);
  }
  CleanupStep(*run->entry->graph, run->step_id);
}

}  // namespace tensorweave
