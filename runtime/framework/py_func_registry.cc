#include "runtime/framework/py_func_registry.h"

#include <memory>
#include <mutex>
#include <utility>

namespace tensorweave {
namespace {

std::mutex callback_mu;
// Shared so that a call in flight keeps its callback while another thread
// replaces it.
std::shared_ptr<const PyFuncCallback>& InstalledCallback() {
  static auto* callback = new std::shared_ptr<const PyFuncCallback>();
  return *callback;
}

}  // namespace

void SetPyFuncCallback(PyFuncCallback callback) {
  auto installed = callback ? std::make_shared<const PyFuncCallback>(std::move(callback)) : nullptr;
  std::lock_guard<std::mutex> lock(callback_mu);
  InstalledCallback() = std::move(installed);
}

Status CallPyFunc(const std::string& token, const std::vector<Tensor>& inputs,
                  std::vector<Tensor>* outputs) {
  std::shared_ptr<const PyFuncCallback> callback;
  {
    std::lock_guard<std::mutex> lock(callback_mu);
    callback = InstalledCallback();
  }
  outputs->clear();
  if (callback == nullptr) {
    return errors::InvalidArgument("Missing py trampoline: no Python binding is loaded to run ",
                                   token,
                                   " (a graph with py_func runs only in the Python process that "
                                   "built it)");
  }
  return (*callback)(token, inputs, outputs);
}

}  // namespace tensorweave
