// Rendezvous: where a _Send on one device hands a tensor to the matching
// _Recv on another, by key. One rendezvous lives for one step.
//
// Keys are TensorFlow's, so a key travels unchanged between processes
// (RunGraph feeds and fetches, RecvTensor):
//   "<send device>;<send device incarnation, 16 hex digits>;<recv device>;<tensor
//   name>;<frame>:<iter>" e.g. "/job:ps/replica:0/task:0/device:CPU:0;00000000075bcd15;
//         /job:worker/replica:0/task:0/device:CPU:0;edge_4_w;0:0"
// The incarnation tells a restarted sender from the one the receiver knew.
#ifndef TENSORWEAVE_FRAMEWORK_RENDEZVOUS_H_
#define TENSORWEAVE_FRAMEWORK_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {

class Rendezvous {
 public:
  // `is_dead`: the sender was dead (it sat in the untaken branch of a
  // conditional); `value` is then empty and the receiver is dead too.
  using DoneCallback = std::function<void(const Status& status, const Tensor& value, bool is_dead)>;

  virtual ~Rendezvous() = default;

  // A key taken apart.
  struct ParsedKey {
    std::string send_device;
    uint64_t send_device_incarnation = 0;
    std::string recv_device;
    std::string tensor_name;
    std::string frame_iter;  // "0:0" outside loops
  };

  // The key both ends compute from their _Send/_Recv attrs.
  static std::string CreateKey(const std::string& send_device, uint64_t send_device_incarnation,
                               const std::string& recv_device, const std::string& tensor_name,
                               const std::string& frame_iter = "0:0");
  // INVALID_ARGUMENT naming the key unless it has the five parts above, full
  // device names ("/job:J/replica:R/task:T/device:TYPE:N") at both ends, a
  // hexadecimal incarnation and a non-empty tensor name.
  static Status ParseKey(const std::string& key, ParsedKey* parsed);

  // Delivers `value` under `key`, or only the news that the sender was dead
  // (`is_dead`, `value` ignored). ALREADY_EXISTS if the key was sent twice
  // in this step; the abort status once StartAbort was called.
  virtual Status Send(const std::string& key, const Tensor& value, bool is_dead) = 0;
  // Calls `done` when the value for `key` arrives (maybe at once, maybe on
  // the sender's thread), or with the abort status.
  virtual void RecvAsync(const std::string& key, DoneCallback done) = 0;
  // Fails every pending and later Recv/Send with `status` (not OK).
  virtual void StartAbort(const Status& status) = 0;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_RENDEZVOUS_H_
