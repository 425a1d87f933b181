// Device: where kernels run. A CPU device has a name such as
// "/job:localhost/replica:0/task:0/device:CPU:0", an Eigen thread-pool device
// for intra-op parallelism, and the variables that live on it.
#ifndef TENSORWEAVE_FRAMEWORK_DEVICE_H_
#define TENSORWEAVE_FRAMEWORK_DEVICE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/framework/tensor.h"

namespace Eigen {
struct ThreadPoolDevice;
}

namespace tensorweave {

// The state of one VariableV2: its current value (uninitialized until the
// first Assign) guarded by `mu`. Consumers of a ref input see this object.
struct Variable {
  explicit Variable(std::string variable_name) : name(std::move(variable_name)) {}
  const std::string name;
  std::mutex mu;
  Tensor tensor;  // guarded by mu
};

// The variables of one device, by shared name. They live as long as the
// device, i.e. as long as the session that made it.
class VariableStore {
 public:
  // The existing variable with this name, or a new uninitialized one.
  Variable* LookupOrCreate(const std::string& name);
  // Null when absent.
  Variable* Lookup(const std::string& name);
  // Makes every variable uninitialized again and frees its value (a
  // worker's CleanupAll, a master's Reset). The Variable objects stay, since
  // kernels keep pointers to them; the next run must initialize them anew.
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& entry : variables_) {
      std::lock_guard<std::mutex> variable_lock(entry.second->mu);
      entry.second->tensor = Tensor();
    }
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Variable>> variables_;
};

class Device {
 public:
  // `eigen_device` is not owned and must outlive the device.
  Device(std::string name, std::string device_type, const Eigen::ThreadPoolDevice* eigen_device)
      : name_(std::move(name)), device_type_(std::move(device_type)), eigen_device_(eigen_device) {}

  const std::string& name() const { return name_; }
  const std::string& device_type() const { return device_type_; }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const { return eigen_device_; }
  VariableStore* variables() { return &variables_; }

 private:
  std::string name_;
  std::string device_type_;
  const Eigen::ThreadPoolDevice* eigen_device_;
  VariableStore variables_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_DEVICE_H_
