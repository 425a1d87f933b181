#include "runtime/framework/device.h"

namespace tensorweave {

const std::string& VariableStore::ContainerOrDefault(const std::string& container) {
  static const std::string* const kDefault = new std::string(kDefaultContainer);
  return container.empty() ? *kDefault : container;
}

Variable* VariableStore::LookupOrCreate(const std::string& container, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<Variable>& slot = containers_[ContainerOrDefault(container)][name];
  if (!slot) slot = std::make_unique<Variable>(name);
  return slot.get();
}

Variable* VariableStore::Lookup(const std::string& container, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found_container = containers_.find(ContainerOrDefault(container));
  if (found_container == containers_.end()) return nullptr;
  auto found = found_container->second.find(name);
  return found == found_container->second.end() ? nullptr : found->second.get();
}

void VariableStore::Clear(const std::vector<std::string>& containers) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::vector<std::string> names =
      containers.empty() ? std::vector<std::string>{kDefaultContainer} : containers;
  for (const std::string& name : names) {
    auto found = containers_.find(name);
    if (found == containers_.end()) continue;
    for (auto& entry : found->second) {
      std::lock_guard<std::mutex> variable_lock(entry.second->mu);
      entry.second->tensor = Tensor();
    }
  }
}

void Device::ClearContainers(const std::vector<std::string>& containers) {
  variables_.Clear(containers);
  if (containers.empty()) {
    resource_manager_.Cleanup(VariableStore::kDefaultContainer);
    return;
  }
  for (const std::string& container : containers) resource_manager_.Cleanup(container);
}

}  // namespace tensorweave
