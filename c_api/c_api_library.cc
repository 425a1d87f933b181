// Loading op libraries (TF_LoadLibrary, TF_GetOpList, TF_DeleteLibraryHandle),
// listing kernels (TF_GetAllRegisteredKernels, TF_GetRegisteredKernelsForOp),
// log listeners and filesystem plugins. The runtime does the work
// (framework/load_library.h, kernel_listing.h, log_listeners.h).
#include <string>

#include "c_api/c_api_internal.h"
#include "runtime/framework/kernel_listing.h"
#include "runtime/framework/load_library.h"
#include "runtime/framework/log_listeners.h"

using tensorweave::Status;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

// A loaded library's handle: the OpList of the ops it registered.
struct TF_Library {
  std::string op_list;
};

namespace {

TF_Buffer* KernelsAsBuffer(const std::string& op_name, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Buffer*>(nullptr), [&]() -> TF_Buffer* {
    const std::string bytes = tensorweave::RegisteredKernels(op_name).SerializeAsString();
    TF_Buffer* buffer = TF_NewBufferFromString(bytes.data(), bytes.size());
    c_api::Set(status, buffer != nullptr
                           ? Status::OK()
                           : errors::ResourceExhausted("Out of memory for the kernel list"));
    return buffer;
  });
}

}  // namespace

extern "C" {

TF_Library* TF_LoadLibrary(const char* library_filename, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Library*>(nullptr), [&]() -> TF_Library* {
    if (library_filename == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TF_LoadLibrary: no file name"));
      return nullptr;
    }
    auto library = std::make_unique<TF_Library>();
    Status loaded = tensorweave::LoadLibrary(library_filename, &library->op_list);
    c_api::Set(status, loaded);
    return loaded.ok() ? library.release() : nullptr;
  });
}

TF_Buffer TF_GetOpList(TF_Library* lib_handle) {
  return TF_Buffer{lib_handle->op_list.data(), lib_handle->op_list.size(), nullptr};
}

void TF_DeleteLibraryHandle(TF_Library* lib_handle) { delete lib_handle; }

TF_Buffer* TF_GetAllRegisteredKernels(TF_Status* status) { return KernelsAsBuffer("", status); }

TF_Buffer* TF_GetRegisteredKernelsForOp(const char* name, TF_Status* status) {
  if (name == nullptr || *name == '\0') {
    c_api::Set(status, errors::InvalidArgument("TF_GetRegisteredKernelsForOp: no op name"));
    return nullptr;
  }
  return KernelsAsBuffer(name, status);
}

void TF_RegisterLogListener(void (*listener)(const char*)) {
  c_api::GuardVoid(nullptr, [&] { tensorweave::AddLogListener(listener); });
}

void TF_RegisterFilesystemPlugin(const char* plugin_filename, TF_Status* status) {
  // TensorFlow's plugins fill a table of C callbacks (tf_filesystem.h) that
  // its file system layer calls; this runtime reads and writes local files
  // directly and has no such layer to plug one into.
  c_api::Set(status, errors::Unimplemented("TF_RegisterFilesystemPlugin('",
                                           plugin_filename ? plugin_filename : "",
                                           "'): filesystem plugins are not supported; only local "
                                           "paths can be read and written"));
}

}  // extern "C"
