// Loading a shared library that registers ops and kernels (its static
// initializers call the registries, e.g. through REGISTER_OP and
// REGISTER_KERNEL_BUILDER), as TensorFlow's tf.load_op_library and
// TF_LoadLibrary do. The ops it added come back as a serialized OpList.
//
//   std::string op_list;
//   TW_RETURN_IF_ERROR(LoadLibrary("./libmy_ops.so", &op_list));
//
// A library is loaded once: loading the same file name again returns the
// same OpList. Libraries stay loaded for the life of the process (their
// registrations cannot be undone). A file that dlopen cannot load is
// NOT_FOUND with dlopen's message, as in TensorFlow.
#ifndef TENSORWEAVE_FRAMEWORK_LOAD_LIBRARY_H_
#define TENSORWEAVE_FRAMEWORK_LOAD_LIBRARY_H_

#include <string>

#include "runtime/framework/status.h"

namespace tensorweave {

Status LoadLibrary(const std::string& filename, std::string* serialized_op_list);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_LOAD_LIBRARY_H_
