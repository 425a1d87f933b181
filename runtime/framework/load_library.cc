#include "runtime/framework/load_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "runtime/framework/op_def_proto.h"

namespace tensorweave {

Status LoadLibrary(const std::string& filename, std::string* serialized_op_list) {
  // One load at a time, so the ops that appear between the two snapshots
  // are this library's.
  static std::mutex* mu = new std::mutex;
  static auto* loaded = new std::map<std::string, std::string>;  // file name -> OpList bytes
  std::lock_guard<std::mutex> lock(*mu);
  auto found = loaded->find(filename);
  if (found != loaded->end()) {
    *serialized_op_list = found->second;
    return Status::OK();
  }
  const std::vector<std::string> before_names = OpRegistry::Global()->ListOpNames();
  const std::set<std::string> before(before_names.begin(), before_names.end());
  // Never closed: its ops and kernels stay registered and point into it.
  void* handle = ::dlopen(filename.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    return errors::NotFound(reason != nullptr ? reason : filename + ": cannot be loaded");
  }
  proto::OpList added;
  for (const std::string& name : OpRegistry::Global()->ListOpNames()) {
    if (before.count(name) > 0) continue;
    const OpDef* op_def = OpRegistry::Global()->LookUp(name);
    if (op_def != nullptr) *added.add_op() = OpDefToProto(*op_def);
  }
  std::sort(added.mutable_op()->begin(), added.mutable_op()->end(),
            [](const proto::OpDef& a, const proto::OpDef& b) { return a.name() < b.name(); });
  *serialized_op_list = added.SerializeAsString();
  (*loaded)[filename] = *serialized_op_list;
  return Status::OK();
}

}  // namespace tensorweave
