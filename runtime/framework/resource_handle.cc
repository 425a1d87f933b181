#include "runtime/framework/resource_handle.h"

#include "runtime/framework/str_util.h"

namespace tensorweave {

void ResourceHandle::AsProto(ResourceHandleProto* proto) const {
  proto->Clear();
  proto->set_device(device_);
  proto->set_container(container_);
  proto->set_name(name_);
  proto->set_hash_code(hash_code_);
  proto->set_maybe_type_name(maybe_type_name_);
}

void ResourceHandle::FromProto(const ResourceHandleProto& proto) {
  device_ = proto.device();
  container_ = proto.container();
  name_ = proto.name();
  hash_code_ = proto.hash_code();
  maybe_type_name_ = proto.maybe_type_name();
}

std::string ResourceHandle::SerializeAsString() const {
  ResourceHandleProto proto;
  AsProto(&proto);
  return proto.SerializeAsString();
}

std::string ResourceHandle::DebugString() const {
  return StrCat(device_, "/", container_, "/", name_, " (",
                maybe_type_name_.empty() ? "unknown type" : maybe_type_name_, ")");
}

uint64_t ResourceTypeHash(const std::string& type_name) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : type_name) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace tensorweave
