// Worker's side of partial runs (TensorFlow's RunGraph with is_partial):
// one step of a registered graph fed and fetched over several RunGraph
// calls with the same step_id.
//
//   call 1: is_partial, sends {a}, recv_key {c}     → starts the executors,
//                                                      answers with c
//   call 2: is_partial, is_last_partial_run, sends {b}, recv_key {d}
//                                                   → answers with d once
//                                                      the executors ended
//
// The executors start with the first call and wait in their
// client-terminated _Recv nodes for feeds that later calls send into the
// step's rendezvous; each call's fetches are taken from the rendezvous as
// their _Send nodes run, not when the step ends. Other partitions of the
// step exchange values with this one through the same rendezvous
// (RecvTensor), as in a whole step.
#include <utility>

#include "runtime/distributed/worker.h"
#include "runtime/distributed/worker_step.h"

namespace tensorweave {

namespace {

// The values one call asked for, filled as their _Send nodes run.
struct PartialFetches {
  std::mutex mu;
  int pending = 0;
  Status status;
  NamedTensors values;
};

}  // namespace

Status Worker::StartPartialRunGraph(CallOptions* call, const RunGraphInput& input,
                                    RunGraphOutput* output, StatusCallback* done) {
  const RunGraphRequest& request = input.request;
  std::shared_ptr<WorkerSession> session;
  TW_RETURN_IF_ERROR(
      FindSession(request.session_handle(), request.create_worker_session_called(), &session));
  std::shared_ptr<const RegisteredGraph> graph;
  TW_RETURN_IF_ERROR(session->graphs()->Lookup(request.graph_handle(), &graph));
  TW_RETURN_IF_ERROR(CheckRunGraphKeys(input, *graph, /*partial=*/true));

  const auto run_key = std::make_pair(request.step_id(), request.graph_handle());
  std::shared_ptr<PartialRun> run;
  bool start = false;
  {
    std::lock_guard<std::mutex> lock(partial_runs_mu_);
    auto found = partial_runs_.find(run_key);
    if (found != partial_runs_.end()) {
      run = found->second;
    } else {
      run = std::make_shared<PartialRun>();
      run->session_handle = request.session_handle();
      run->step = std::make_shared<Step>();
      run->step->session = session;
      run->step->graph = graph;
      run->step->rendezvous = rendezvous_mgr_.FindOrCreate(request.step_id());
      run->step->rendezvous->SetWorkerCache(session->worker_cache().get());
      partial_runs_.emplace(run_key, run);
      ++partial_executors_running_;
      start = true;
    }
  }
  if (run->step->graph != graph) {
    return errors::InvalidArgument("Partial run step ", request.step_id(),
                                   " was started with another registration of graph ",
                                   request.graph_handle());
  }
  // Cancelling any call of the step (the master saw a failure elsewhere, or
  // its deadline passed) ends the whole step, as in TensorFlow.
  if (call != nullptr) {
    call->SetCancelCallback([step = run->step] {
      step->Cancel(errors::Cancelled("RunGraph of a partial run was cancelled"));
    });
  }

  if (start) {
    Executor::Args args;
    args.step_id = request.step_id();
    args.rendezvous = run->step->rendezvous.get();
    args.cancellation_manager = &run->step->cancellation;
    args.runner = &runner_;
    args.cancelled = &run->step->cancelled;
    // No deadline of the call: the step outlives it. The master's
    // per-call deadline cancels the step instead.
    graph->RunAsync(args, runner_, /*run_last_inline=*/false, [this, run](const Status& status) {
      // Calls waiting for fetches of a failed step wake with its error.
      if (!status.ok()) run->step->rendezvous->StartAbort(status);
      std::vector<std::function<void(const Status&)>> waiting;
      {
        std::lock_guard<std::mutex> lock(run->mu);
        run->executors_done = true;
        run->executors_status = status;
        waiting.swap(run->waiting_for_end);
      }
      for (auto& resume : waiting) resume(status);
      // The last use of the worker: its destructor waits for this count.
      std::lock_guard<std::mutex> lock(partial_runs_mu_);
      if (--partial_executors_running_ == 0) partial_runs_cv_.notify_all();
    });
  }

  Status sent;
  for (const auto& [key, value] : input.sends) {
    sent = run->step->rendezvous->Send(key, value, /*is_dead=*/false);
    if (!sent.ok()) break;
  }

  const bool last = request.is_last_partial_run();
  auto fetches = std::make_shared<PartialFetches>();
  // Ends this call once its fetches arrived (and, for the last call, once
  // the executors ended): runs exactly once, on whichever thread finishes.
  auto finish = [this, call, run, run_key, output, fetches, last,
                 done = std::move(*done)]() mutable {
    auto answer = [call, output, fetches, done = std::move(done)](Status status) {
      if (call != nullptr) call->ClearCancelCallback();
      output->recvs.clear();
      if (status.ok()) output->recvs = std::move(fetches->values);
      done(status);
    };
    Status status;
    {
      std::lock_guard<std::mutex> lock(fetches->mu);
      status = fetches->status;
    }
    if (!last) return answer(status);
    auto end = [this, run, run_key, status,
                answer = std::move(answer)](const Status& executors_status) mutable {
      {
        std::lock_guard<std::mutex> lock(partial_runs_mu_);
        auto found = partial_runs_.find(run_key);
        if (found != partial_runs_.end() && found->second == run) partial_runs_.erase(found);
      }
      // The executors' error names the node that failed; a fetch's only
      // says the rendezvous was aborted.
      answer(executors_status.ok() ? status : executors_status);
    };
    std::unique_lock<std::mutex> lock(run->mu);
    if (!run->executors_done) {
      run->waiting_for_end.push_back(std::move(end));
      return;
    }
    const Status executors_status = run->executors_status;
    lock.unlock();
    end(executors_status);
  };
  auto shared_finish = std::make_shared<decltype(finish)>(std::move(finish));

  const int num_fetches = sent.ok() ? request.recv_key_size() : 0;
  fetches->values.resize(num_fetches);
  fetches->pending = num_fetches + 1;  // the 1 is released below, after every RecvLocalAsync
  fetches->status = sent;
  auto one_done = [fetches, shared_finish] {
    bool all = false;
    {
      std::lock_guard<std::mutex> lock(fetches->mu);
      all = --fetches->pending == 0;
    }
    if (all) (*shared_finish)();
  };
  for (int i = 0; i < num_fetches; ++i) {
    const std::string& key = request.recv_key(i);
    fetches->values[i].first = key;
    run->step->rendezvous->RecvLocalAsync(
        key, [fetches, one_done, i, key](const Status& status, const Tensor& value, bool is_dead) {
          {
            std::lock_guard<std::mutex> lock(fetches->mu);
            if (!status.ok()) {
              fetches->status.Update(status);
            } else if (is_dead) {  // TensorFlow's words for a dead fetch
              fetches->status.Update(
                  errors::InvalidArgument("The tensor returned for ", key, " was not valid."));
            } else {
              fetches->values[i].second = value;
            }
          }
          one_done();
        });
  }
  one_done();
  return Status::OK();
}

void Worker::CancelPartialRuns(
    const std::function<bool(int64_t step_id, const PartialRun&)>& matches, const Status& reason) {
  std::vector<std::shared_ptr<PartialRun>> cancelled;
  {
    std::lock_guard<std::mutex> lock(partial_runs_mu_);
    for (auto it = partial_runs_.begin(); it != partial_runs_.end();) {
      if (matches(it->first.first, *it->second)) {
        cancelled.push_back(std::move(it->second));
        it = partial_runs_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Their executors end with the reason; calls waiting for them answer.
  for (const auto& run : cancelled) run->step->Cancel(reason);
}

}  // namespace tensorweave
