// Resources: state that kernels share by name (TensorArrays, Stacks), kept
// by a ResourceMgr under a container and a name, and reached from a graph
// through DT_RESOURCE handles (resource_handle.h).
//
//   class Counter : public ResourceBase {
//    public:
//     static const char* TypeName() { return "Counter"; }
//     std::string DebugString() const override { return "Counter"; }
//   };
//   // In the kernel that makes it, for this step only:
//   ResourceHandle handle;
//   OP_REQUIRES_OK(ctx, MakeStepResourceHandle<Counter>(ctx, "counter_1", &handle));
//   OP_REQUIRES_OK(ctx, CreateResource(ctx, handle, std::make_shared<Counter>()));
//   // In the kernels that use it (input 0 is the handle):
//   ResourceHandle handle;
//   OP_REQUIRES_OK(ctx, HandleFromInput(ctx, 0, &handle));
//   std::shared_ptr<Counter> counter;
//   OP_REQUIRES_OK(ctx, LookupResource(ctx, handle, &counter));
//
// Resources are reference counted (shared_ptr): a kernel that looked one
// up keeps it alive even when the container is cleaned up meanwhile.
//
// Two places keep resources. Every Device has a ResourceMgr that lives as
// long as the device (Device::resource_manager()). Every step has a
// ScopedStepContainer, made by whoever runs the step (DirectSession::Run, a
// worker's RunGraph) and handed to kernels through OpKernelContext::
// step_container(); its resources go away when the step ends, however it
// ends (done, failed, cancelled), so a TensorArray never outlives its step.
// Handles to step resources name the container "__per_step_<step_id>".
#ifndef TENSORWEAVE_FRAMEWORK_RESOURCE_MGR_H_
#define TENSORWEAVE_FRAMEWORK_RESOURCE_MGR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <utility>

#include "runtime/framework/resource_handle.h"
#include "runtime/framework/status.h"

namespace tensorweave {

class OpKernelContext;

// A resource kind derives from this and names itself with a static
// `const char* TypeName()`, which handles carry (hash_code,
// maybe_type_name) so a kernel can refuse a handle of another kind.
class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string DebugString() const = 0;
};

class ResourceMgr {
 public:
  ResourceMgr() = default;
  ResourceMgr(const ResourceMgr&) = delete;
  ResourceMgr& operator=(const ResourceMgr&) = delete;

  // ALREADY_EXISTS when `container` already holds a T named `name`.
  template <typename T>
  Status Create(const std::string& container, const std::string& name,
                std::shared_ptr<T> resource) {
    return DoCreate(container, Key<T>(name), std::move(resource));
  }
  // NOT_FOUND when absent.
  template <typename T>
  Status Lookup(const std::string& container, const std::string& name,
                std::shared_ptr<T>* resource) const {
    std::shared_ptr<ResourceBase> base;
    TW_RETURN_IF_ERROR(DoLookup(container, Key<T>(name), &base));
    *resource = std::static_pointer_cast<T>(base);
    return Status::OK();
  }
  // The existing T, or the one `creator` makes (under the manager's lock,
  // so two callers never both create). A creator's error is returned and
  // nothing is added.
  template <typename T>
  Status LookupOrCreate(const std::string& container, const std::string& name,
                        std::shared_ptr<T>* resource,
                        const std::function<Status(std::shared_ptr<T>*)>& creator) {
    std::shared_ptr<ResourceBase> base;
    TW_RETURN_IF_ERROR(DoLookupOrCreate(container, Key<T>(name), &base,
                                        [&creator](std::shared_ptr<ResourceBase>* made) {
                                          std::shared_ptr<T> typed;
                                          TW_RETURN_IF_ERROR(creator(&typed));
                                          *made = std::move(typed);
                                          return Status::OK();
                                        }));
    *resource = std::static_pointer_cast<T>(base);
    return Status::OK();
  }
  // NOT_FOUND when absent. Holders of the resource keep it alive.
  template <typename T>
  Status Delete(const std::string& container, const std::string& name) {
    return DoDelete(container, Key<T>(name));
  }
  // Drops every resource of `container`; OK when there is none.
  void Cleanup(const std::string& container);
  // Every resource of every container (for tests and leak checks).
  int64_t NumResources() const;

 private:
  struct TypedName {
    std::type_index type;
    const char* type_name;
    std::string name;
    bool operator<(const TypedName& other) const {
      if (type != other.type) return type < other.type;
      return name < other.name;
    }
  };
  template <typename T>
  static TypedName Key(const std::string& name) {
    return TypedName{std::type_index(typeid(T)), T::TypeName(), name};
  }
  using Creator = std::function<Status(std::shared_ptr<ResourceBase>*)>;

  Status DoCreate(const std::string& container, const TypedName& key,
                  std::shared_ptr<ResourceBase> resource);
  Status DoLookup(const std::string& container, const TypedName& key,
                  std::shared_ptr<ResourceBase>* resource) const;
  Status DoLookupOrCreate(const std::string& container, const TypedName& key,
                          std::shared_ptr<ResourceBase>* resource, const Creator& creator);
  Status DoDelete(const std::string& container, const TypedName& key);

  mutable std::mutex mu_;
  std::map<std::string, std::map<TypedName, std::shared_ptr<ResourceBase>>> containers_;
};

// The resources of one step. Inside, each device's resources sit in a
// container named after the device, so two devices of a step never clash.
class ScopedStepContainer {
 public:
  explicit ScopedStepContainer(int64_t step_id);
  ScopedStepContainer(const ScopedStepContainer&) = delete;
  ScopedStepContainer& operator=(const ScopedStepContainer&) = delete;

  int64_t step_id() const { return step_id_; }
  // "__per_step_<step_id>": the container name handles to step resources carry.
  const std::string& name() const { return name_; }
  ResourceMgr* resources() { return &resources_; }

 private:
  const int64_t step_id_;
  const std::string name_;
  ResourceMgr resources_;
};

// --- For kernels ---------------------------------------------------------

// A handle to a resource of type `type_name` named `name` in the step
// container of ctx, on ctx's device. FAILED_PRECONDITION when whoever runs
// the step gave it no step container.
Status MakeStepResourceHandleOfType(OpKernelContext* ctx, const std::string& name,
                                    const char* type_name, ResourceHandle* handle);
template <typename T>
Status MakeStepResourceHandle(OpKernelContext* ctx, const std::string& name,
                              ResourceHandle* handle) {
  return MakeStepResourceHandleOfType(ctx, name, T::TypeName(), handle);
}

// Input `input` as a handle: INVALID_ARGUMENT unless it is a DT_RESOURCE
// tensor with exactly one element.
Status HandleFromInput(OpKernelContext* ctx, int input, ResourceHandle* handle);

// Where `handle` points from ctx: the step container's manager when the
// handle names it, else the device's; `container` is the key inside it.
// INVALID_ARGUMENT when the handle is for another device, for a step
// container other than this step's, or for a resource of another type.
Status ResolveResourceHandle(OpKernelContext* ctx, const ResourceHandle& handle,
                             const char* type_name, ResourceMgr** manager, std::string* container);

template <typename T>
Status CreateResource(OpKernelContext* ctx, const ResourceHandle& handle,
                      std::shared_ptr<T> resource) {
  ResourceMgr* manager = nullptr;
  std::string container;
  TW_RETURN_IF_ERROR(ResolveResourceHandle(ctx, handle, T::TypeName(), &manager, &container));
  return manager->Create<T>(container, handle.name(), std::move(resource));
}

template <typename T>
Status LookupResource(OpKernelContext* ctx, const ResourceHandle& handle,
                      std::shared_ptr<T>* resource) {
  ResourceMgr* manager = nullptr;
  std::string container;
  TW_RETURN_IF_ERROR(ResolveResourceHandle(ctx, handle, T::TypeName(), &manager, &container));
  return manager->Lookup<T>(container, handle.name(), resource);
}

template <typename T>
Status LookupOrCreateResource(OpKernelContext* ctx, const ResourceHandle& handle,
                              std::shared_ptr<T>* resource,
                              const std::function<Status(std::shared_ptr<T>*)>& creator) {
  ResourceMgr* manager = nullptr;
  std::string container;
  TW_RETURN_IF_ERROR(ResolveResourceHandle(ctx, handle, T::TypeName(), &manager, &container));
  return manager->LookupOrCreate<T>(container, handle.name(), resource, creator);
}

template <typename T>
Status DeleteResource(OpKernelContext* ctx, const ResourceHandle& handle) {
  ResourceMgr* manager = nullptr;
  std::string container;
  TW_RETURN_IF_ERROR(ResolveResourceHandle(ctx, handle, T::TypeName(), &manager, &container));
  return manager->Delete<T>(container, handle.name());
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_RESOURCE_MGR_H_
