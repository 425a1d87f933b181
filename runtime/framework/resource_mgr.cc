#include "runtime/framework/resource_mgr.h"

#include "runtime/framework/op_kernel.h"

namespace tensorweave {

Status ResourceMgr::DoCreate(const std::string& container, const TypedName& key,
                             std::shared_ptr<ResourceBase> resource) {
  std::lock_guard<std::mutex> lock(mu_);
  auto inserted = containers_[container].emplace(key, std::move(resource));
  if (!inserted.second) {
    return errors::AlreadyExists("Resource ", container, "/", key.name, "/", key.type_name,
                                 " already exists");
  }
  return Status::OK();
}

Status ResourceMgr::DoLookup(const std::string& container, const TypedName& key,
                             std::shared_ptr<ResourceBase>* resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto in_container = containers_.find(container);
  if (in_container != containers_.end()) {
    auto found = in_container->second.find(key);
    if (found != in_container->second.end()) {
      *resource = found->second;
      return Status::OK();
    }
  }
  return errors::NotFound("Resource ", container, "/", key.name, "/", key.type_name,
                          " does not exist (it may have been closed, or its step has ended)");
}

Status ResourceMgr::DoLookupOrCreate(const std::string& container, const TypedName& key,
                                     std::shared_ptr<ResourceBase>* resource,
                                     const Creator& creator) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& resources = containers_[container];
  auto found = resources.find(key);
  if (found != resources.end()) {
    *resource = found->second;
    return Status::OK();
  }
  std::shared_ptr<ResourceBase> made;
  Status status = creator(&made);
  if (!status.ok() || made == nullptr) {
    if (resources.empty()) containers_.erase(container);
    return status.ok() ? errors::Internal("A resource creator made nothing") : status;
  }
  resources.emplace(key, made);
  *resource = std::move(made);
  return Status::OK();
}

Status ResourceMgr::DoDelete(const std::string& container, const TypedName& key) {
  std::shared_ptr<ResourceBase> doomed;  // destroyed after the lock is released
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto in_container = containers_.find(container);
    if (in_container != containers_.end()) {
      auto found = in_container->second.find(key);
      if (found != in_container->second.end()) {
        doomed = std::move(found->second);
        in_container->second.erase(found);
        if (in_container->second.empty()) containers_.erase(in_container);
        return Status::OK();
      }
    }
  }
  return errors::NotFound("Resource ", container, "/", key.name, "/", key.type_name,
                          " does not exist");
}

void ResourceMgr::Cleanup(const std::string& container) {
  std::map<TypedName, std::shared_ptr<ResourceBase>> doomed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = containers_.find(container);
    if (found == containers_.end()) return;
    doomed.swap(found->second);
    containers_.erase(found);
  }
}

int64_t ResourceMgr::NumResources() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t count = 0;
  for (const auto& container : containers_) count += container.second.size();
  return count;
}

ScopedStepContainer::ScopedStepContainer(int64_t step_id)
    : step_id_(step_id), name_(StrCat("__per_step_", step_id)) {}

Status MakeStepResourceHandleOfType(OpKernelContext* ctx, const std::string& name,
                                    const char* type_name, ResourceHandle* handle) {
  if (ctx->step_container() == nullptr) {
    return errors::FailedPrecondition(
        "This step has no step container for its per-step resources (the code running the "
        "executor must set Executor::Args::step_container)");
  }
  *handle = ResourceHandle();
  handle->set_device(ctx->device()->name());
  handle->set_container(ctx->step_container()->name());
  handle->set_name(name);
  handle->set_hash_code(ResourceTypeHash(type_name));
  handle->set_maybe_type_name(type_name);
  return Status::OK();
}

Status HandleFromInput(OpKernelContext* ctx, int input, ResourceHandle* handle) {
  const Tensor& tensor = ctx->input(input);
  if (tensor.dtype() != DT_RESOURCE || tensor.NumElements() != 1) {
    return errors::InvalidArgument("Input ", input, " must be a single resource handle, not a ",
                                   DataTypeString(tensor.dtype()), " tensor of shape ",
                                   tensor.shape().DebugString());
  }
  *handle = tensor.data<ResourceHandle>()[0];
  return Status::OK();
}

Status ResolveResourceHandle(OpKernelContext* ctx, const ResourceHandle& handle,
                             const char* type_name, ResourceMgr** manager, std::string* container) {
  if (handle.hash_code() != ResourceTypeHash(type_name)) {
    return errors::InvalidArgument(
        "Trying to access resource ", handle.name(), " of type ",
        handle.maybe_type_name().empty() ? std::string("(unknown)") : handle.maybe_type_name(),
        " as a ", type_name);
  }
  if (handle.device() != ctx->device()->name()) {
    return errors::InvalidArgument("Trying to access resource ", handle.name(), " located on ",
                                   handle.device(), " from device ", ctx->device()->name());
  }
  ScopedStepContainer* step = ctx->step_container();
  if (handle.container().rfind("__per_step_", 0) == 0) {
    if (step == nullptr || handle.container() != step->name()) {
      return errors::InvalidArgument("Resource ", handle.name(), " belongs to step container ",
                                     handle.container(), ", which is not this step's (",
                                     step == nullptr ? std::string("none") : step->name(),
                                     "): per-step resources end with their step");
    }
    *manager = step->resources();
    *container = ctx->device()->name();
    return Status::OK();
  }
  *manager = ctx->device()->resource_manager();
  *container = handle.container();
  return Status::OK();
}

}  // namespace tensorweave
