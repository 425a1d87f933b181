// IntraProcessRendezvous: the rendezvous of one step inside one process. A
// _Send stores its value under a key; the matching _Recv either finds it or
// leaves a callback that the Send (or an abort) later runs.
//
//   IntraProcessRendezvous rendezvous;
//   const std::string key = Rendezvous::CreateKey(cpu0, incarnation, cpu1, "edge_7_x");
//   rendezvous.RecvAsync(key, [](const Status& s, const Tensor& v, bool is_dead) { ... });
//   rendezvous.Send(key, value, /*is_dead=*/false);  // runs the callback above on this thread
//
// Each key carries exactly one value per step and has at most one receiver.
#ifndef TENSORWEAVE_COMMON_RUNTIME_RENDEZVOUS_IMPL_H_
#define TENSORWEAVE_COMMON_RUNTIME_RENDEZVOUS_IMPL_H_

#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/framework/rendezvous.h"

namespace tensorweave {

class IntraProcessRendezvous : public Rendezvous {
 public:
  // The owner keeps the rendezvous alive until every receiver was called
  // (the executors of a step finish only after their _Recv nodes did).
  IntraProcessRendezvous() = default;

  Status Send(const std::string& key, const Tensor& value, bool is_dead) override;
  void RecvAsync(const std::string& key, DoneCallback done) override;
  void StartAbort(const Status& status) override;

 private:
  // A key is either holding a sent value or a receiver waiting for one.
  struct Slot {
    bool has_value = false;
    Tensor value;
    bool is_dead = false;
    DoneCallback waiter;
  };

  std::mutex mu_;
  Status abort_status_;                          // guarded by mu_; not OK once aborted
  std::unordered_map<std::string, Slot> slots_;  // guarded by mu_
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_RENDEZVOUS_IMPL_H_
