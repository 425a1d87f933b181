#include "runtime/framework/kernel_listing.h"

namespace tensorweave {

KernelList RegisteredKernels(const std::string& op_name) {
  KernelList list;
  for (const KernelDefBuilder& def : ListKernelDefs()) {
    if (!op_name.empty() && def.op() != op_name) continue;
    KernelDef* kernel = list.add_kernel();
    kernel->set_op(def.op());
    kernel->set_device_type(def.device_type());
    for (const KernelDefBuilder::Constraint& constraint : def.constraints()) {
      KernelDef::AttrConstraint* out = kernel->add_constraint();
      out->set_name(constraint.attr);
      out->mutable_allowed_values()->mutable_list()->add_type(constraint.dtype);
    }
  }
  return list;
}

}  // namespace tensorweave
