// ResourceHandle: the value a DT_RESOURCE tensor holds, naming a resource
// (a TensorArray, a Stack) by the device whose resource manager keeps it,
// its container and its name, with a code for the resource's C++ type.
//
//   ResourceHandle handle;
//   handle.set_device(device->name());
//   handle.set_container(step_container->name());
//   handle.set_name("TensorArray_3");
//   handle.set_hash_code(ResourceTypeHash("TensorArray"));
//   Tensor t(DT_RESOURCE, TensorShape({}));
//   t.data<ResourceHandle>()[0] = handle;
//
// It travels in a TensorProto's resource_handle_val as TensorFlow's
// ResourceHandleProto (AsProto / FromProto).
#ifndef TENSORWEAVE_FRAMEWORK_RESOURCE_HANDLE_H_
#define TENSORWEAVE_FRAMEWORK_RESOURCE_HANDLE_H_

#include <cstdint>
#include <string>

#include "runtime/framework/types.h"
#include "tensorweave/proto/resource_handle.pb.h"

namespace tensorweave {

class ResourceHandle {
 public:
  const std::string& device() const { return device_; }
  void set_device(std::string device) { device_ = std::move(device); }
  const std::string& container() const { return container_; }
  void set_container(std::string container) { container_ = std::move(container); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  uint64_t hash_code() const { return hash_code_; }
  void set_hash_code(uint64_t hash_code) { hash_code_ = hash_code; }
  const std::string& maybe_type_name() const { return maybe_type_name_; }
  void set_maybe_type_name(std::string type_name) { maybe_type_name_ = std::move(type_name); }

  void AsProto(ResourceHandleProto* proto) const;
  // Every field of the proto is a plain value, so any parsed proto is a
  // valid handle; whether it names a live resource is the lookup's concern.
  void FromProto(const ResourceHandleProto& proto);
  // The serialized ResourceHandleProto (what TensorFlow hands to Python).
  std::string SerializeAsString() const;

  // "device/container/name (type)" for error messages.
  std::string DebugString() const;

 private:
  std::string device_;
  std::string container_;
  std::string name_;
  uint64_t hash_code_ = 0;
  std::string maybe_type_name_;
};

// A stable code for a resource type's name (64-bit FNV-1a), which handles
// carry as hash_code so a lookup can tell a Stack handle from a TensorArray
// one before touching the resource.
uint64_t ResourceTypeHash(const std::string& type_name);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_RESOURCE_HANDLE_H_
