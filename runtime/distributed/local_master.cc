#include "runtime/distributed/local_master.h"

#include <map>
#include <mutex>
#include <shared_mutex>

namespace tensorweave {
namespace {

// One registered master. Calls hold `mu` shared while they use `master`;
// unregistering takes it exclusively, so it waits for them, and clears
// `master`.
struct Entry {
  std::shared_mutex mu;
  Master* master = nullptr;  // guarded by mu; nullptr once unregistered
  std::string target;
};

std::mutex registry_mu;
std::map<std::string, std::shared_ptr<Entry>>& Registry() {
  static auto* registry = new std::map<std::string, std::shared_ptr<Entry>>;
  return *registry;
}

class EntryRegistration final : public LocalMaster::Registration {
 public:
  explicit EntryRegistration(std::shared_ptr<Entry> entry) : entry_(std::move(entry)) {}
  ~EntryRegistration() override {
    {
      std::lock_guard<std::mutex> lock(registry_mu);
      auto found = Registry().find(entry_->target);
      if (found != Registry().end() && found->second == entry_) Registry().erase(found);
    }
    std::unique_lock<std::shared_mutex> lock(entry_->mu);
    entry_->master = nullptr;
  }

 private:
  const std::shared_ptr<Entry> entry_;
};

// A master of this process, called directly.
class DirectMaster final : public MasterInterface {
 public:
  explicit DirectMaster(std::shared_ptr<Entry> entry) : entry_(std::move(entry)) {}

  Status CreateSession(CallOptions* call, const CreateSessionRequest& request,
                       CreateSessionResponse* response) override {
    return WithMaster([&](Master* master) { return master->CreateSession(request, response); });
  }
  Status ExtendSession(CallOptions* call, const ExtendSessionRequest& request,
                       ExtendSessionResponse* response) override {
    return WithMaster([&](Master* master) { return master->ExtendSession(request, response); });
  }
  Status PartialRunSetup(CallOptions* call, const PartialRunSetupRequest& request,
                         PartialRunSetupResponse* response) override {
    return WithMaster([&](Master* master) { return master->PartialRunSetup(request, response); });
  }
  Status RunStep(CallOptions* call, const RunStepRequest& request, const NamedTensors& feeds,
                 RunStepResponse* response, NamedTensors* fetched) override {
    return WithMaster(
        [&](Master* master) { return master->RunStep(request, feeds, response, fetched); });
  }
  Status CloseSession(CallOptions* call, const CloseSessionRequest& request,
                      CloseSessionResponse* response) override {
    return WithMaster([&](Master* master) { return master->CloseSession(request, response); });
  }
  Status ListDevices(CallOptions* call, const ListDevicesRequest& request,
                     ListDevicesResponse* response) override {
    return WithMaster([&](Master* master) { return master->ListDevices(request, response); });
  }
  Status Reset(CallOptions* call, const ResetRequest& request, ResetResponse* response) override {
    return WithMaster([&](Master* master) { return master->Reset(request, response); });
  }
  Status MakeCallable(CallOptions* call, const MakeCallableRequest& request,
                      MakeCallableResponse* response) override {
    return WithMaster([&](Master* master) { return master->MakeCallable(request, response); });
  }
  Status RunCallable(CallOptions* call, const RunCallableRequest& request,
                     const std::vector<Tensor>& feeds, RunCallableResponse* response,
                     std::vector<Tensor>* fetched) override {
    return WithMaster(
        [&](Master* master) { return master->RunCallable(request, feeds, response, fetched); });
  }
  Status ReleaseCallable(CallOptions* call, const ReleaseCallableRequest& request,
                         ReleaseCallableResponse* response) override {
    return WithMaster([&](Master* master) { return master->ReleaseCallable(request, response); });
  }

 private:
  // Runs `body` with the master, or fails as an RPC to a stopped server.
  template <typename Body>
  Status WithMaster(Body body) {
    std::shared_lock<std::shared_mutex> lock(entry_->mu);
    if (entry_->master == nullptr) {
      return errors::Unavailable("The server serving ", entry_->target, " has stopped");
    }
    return body(entry_->master);
  }

  const std::shared_ptr<Entry> entry_;
};

}  // namespace

std::unique_ptr<LocalMaster::Registration> LocalMaster::Register(const std::string& target,
                                                                 Master* master) {
  auto entry = std::make_shared<Entry>();
  entry->master = master;
  entry->target = target;
  std::lock_guard<std::mutex> lock(registry_mu);
  Registry()[target] = entry;
  return std::make_unique<EntryRegistration>(std::move(entry));
}

std::unique_ptr<MasterInterface> LocalMaster::Lookup(const std::string& target) {
  std::lock_guard<std::mutex> lock(registry_mu);
  auto found = Registry().find(target);
  if (found == Registry().end()) return nullptr;
  return std::make_unique<DirectMaster>(found->second);
}

}  // namespace tensorweave
