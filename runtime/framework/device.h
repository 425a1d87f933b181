// Device: where kernels run. A CPU device has a name such as
// "/job:localhost/replica:0/task:0/device:CPU:0", an Eigen thread-pool device
// for intra-op parallelism, and the variables that live on it.
#ifndef TENSORWEAVE_FRAMEWORK_DEVICE_H_
#define TENSORWEAVE_FRAMEWORK_DEVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/framework/resource_mgr.h"
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

// The variables of one device, by container and shared name, as
// TensorFlow's resource manager keeps them: a VariableV2 whose `container`
// attr is empty lives in the default container, "localhost". They live as
// long as the device, i.e. as long as the session or worker that made it.
class VariableStore {
 public:
  static constexpr char kDefaultContainer[] = "localhost";

  // The existing variable with this name in `container` ("" is the
  // default one), or a new uninitialized one.
  Variable* LookupOrCreate(const std::string& container, const std::string& name);
  Variable* LookupOrCreate(const std::string& name) { return LookupOrCreate("", name); }
  // Null when absent.
  Variable* Lookup(const std::string& container, const std::string& name);
  Variable* Lookup(const std::string& name) { return Lookup("", name); }
  // Makes every variable of the named containers uninitialized again and
  // frees its value: of the default container when `containers` is empty,
  // else of exactly those named (a worker's CleanupAll, a session Reset).
  // The Variable objects stay, since kernels keep pointers to them; the
  // next run must initialize them anew.
  void Clear(const std::vector<std::string>& containers);

 private:
  static const std::string& ContainerOrDefault(const std::string& container);

  std::mutex mu_;
  // container -> name -> variable
  std::map<std::string, std::map<std::string, std::unique_ptr<Variable>>> containers_;
};

class Device {
 public:
  // `eigen_device` is not owned and must outlive the device. `incarnation`
  // identifies this instance of the named device (a restarted worker's
  // devices have new ones); it goes into the rendezvous keys of transfers
  // it sends.
  Device(std::string name, std::string device_type, const Eigen::ThreadPoolDevice* eigen_device,
         uint64_t incarnation = 1)
      : name_(std::move(name)),
        device_type_(std::move(device_type)),
        eigen_device_(eigen_device),
        incarnation_(incarnation) {}

  const std::string& name() const { return name_; }
  const std::string& device_type() const { return device_type_; }
  uint64_t incarnation() const { return incarnation_; }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const { return eigen_device_; }
  VariableStore* variables() { return &variables_; }
  // Resources kept by container and name for as long as the device lives
  // (per-step ones live in the step's ScopedStepContainer instead).
  ResourceMgr* resource_manager() { return &resource_manager_; }
  // Session::Reset's work on this device: empties the named containers
  // (the default one when none are named) of both the ref-variable store and
  // the resource manager, so resource variables are dropped too.
  void ClearContainers(const std::vector<std::string>& containers);

 private:
  std::string name_;
  std::string device_type_;
  const Eigen::ThreadPoolDevice* eigen_device_;
  uint64_t incarnation_;
  VariableStore variables_;
  ResourceMgr resource_manager_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_DEVICE_H_
