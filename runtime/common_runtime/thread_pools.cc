#include "runtime/common_runtime/thread_pools.h"

// EIGEN_USE_THREADS comes from the build flags.

#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unsupported/Eigen/CXX11/Tensor>
#include <unsupported/Eigen/CXX11/ThreadPool>
#include <vector>

namespace tensorweave {

namespace {

// A thread started ahead of time that waits until it is given its work.
// Eigen's pools start their threads inside their constructor, where a
// refused thread would throw through a half-built pool and terminate the
// process; parking threads first lets us find out how many we can have.
class ParkedThread {
 public:
  ParkedThread() : thread_([this] { WaitAndRun(); }) {}
  // A thread never given work just ends; one given work ends with it.
  ~ParkedThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
      cv_.notify_one();
    }
    thread_.join();
  }

  void Start(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mu_);
    work_ = std::move(work);
    cv_.notify_one();
  }

 private:
  void WaitAndRun() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return work_ != nullptr || released_; });
    std::function<void()> work = std::move(work_);
    lock.unlock();
    if (work) work();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> work_;
  bool released_ = false;
  std::thread thread_;  // last: the members it uses exist before it starts
};

using ParkedThreads = std::vector<std::unique_ptr<ParkedThread>>;

// Starts up to `wanted` parked threads; fewer if the system refuses more.
ParkedThreads StartParkedThreads(int wanted) {
  ParkedThreads threads;
  threads.reserve(wanted);
  for (int i = 0; i < wanted; ++i) {
    try {
      threads.push_back(std::make_unique<ParkedThread>());
    } catch (const std::exception&) {
      break;  // std::system_error (no more threads) or bad_alloc
    }
  }
  return threads;
}

// Eigen's thread environment, handing out parked threads instead of
// creating new ones. Eigen copies the environment, hence the shared list.
struct ParkedThreadEnvironment {
  using Task = Eigen::StlThreadEnvironment::Task;

  class EnvThread {
   public:
    explicit EnvThread(std::unique_ptr<ParkedThread> thread) : thread_(std::move(thread)) {}
    void OnCancel() {}

   private:
    std::unique_ptr<ParkedThread> thread_;
  };

  EnvThread* CreateThread(std::function<void()> work) {
    std::unique_ptr<ParkedThread> thread = std::move(parked->back());
    parked->pop_back();
    thread->Start(std::move(work));
    return new EnvThread(std::move(thread));
  }
  Task CreateTask(std::function<void()> work) { return Task{std::move(work)}; }
  void ExecuteTask(const Task& task) { task.f(); }

  std::shared_ptr<ParkedThreads> parked;
};

using Pool = Eigen::ThreadPoolTempl<ParkedThreadEnvironment>;

struct IntraOpPool {
  explicit IntraOpPool(Pool* pool) : pool(pool), device(pool, pool->NumThreads()) {}
  std::unique_ptr<Pool> pool;
  Eigen::ThreadPoolDevice device;
};

Status ResolveThreads(int requested, int* threads) {
  if (requested > kMaxPoolThreads) {
    return errors::InvalidArgument("A thread pool of ", requested,
                                   " threads was asked for; at most ", kMaxPoolThreads,
                                   " are supported");
  }
  if (requested > 0) {
    *threads = requested;
  } else {
    const unsigned cores = std::thread::hardware_concurrency();
    *threads = cores == 0 ? 1 : static_cast<int>(cores);
  }
  return Status::OK();
}

// A pool of as many of `threads` threads as the system gives. Spinning
// threads look for work a while before they sleep.
Status NewPool(int threads, bool allow_spinning, std::unique_ptr<Pool>* pool) {
  auto parked = std::make_shared<ParkedThreads>(StartParkedThreads(threads));
  if (parked->empty()) {
    return errors::ResourceExhausted("Could not start any thread for a pool of ", threads);
  }
  const int started = static_cast<int>(parked->size());
  pool->reset(new Pool(started, allow_spinning, ParkedThreadEnvironment{std::move(parked)}));
  return Status::OK();
}

// Pools by requested size. Intentionally never destroyed: sessions on other
// threads may still run while static destructors do.
std::mutex pools_mu;
std::map<int, Pool*>& InterOpPools() {
  static auto* pools = new std::map<int, Pool*>();
  return *pools;
}
std::map<int, IntraOpPool*>& IntraOpPools() {
  static auto* pools = new std::map<int, IntraOpPool*>();
  return *pools;
}

}  // namespace

Status InterOpRunner(int num_threads, Executor::Runner* runner) {
  int threads = 0;
  TW_RETURN_IF_ERROR(ResolveThreads(num_threads, &threads));
  Pool* pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(pools_mu);
    Pool*& slot = InterOpPools()[threads];
    if (slot == nullptr) {
      // Inter-op threads do not spin: a step's nodes mostly wait on one
      // another or on other tasks, and spinning threads of several
      // processes on a small machine take the cores the work needs (a ps +
      // 2 workers cluster on 2 cores: 570-599 steps/s without, 515-529 with;
      // an MLP training step in one process is no slower).
      std::unique_ptr<Pool> created;
      TW_RETURN_IF_ERROR(NewPool(threads, /*allow_spinning=*/false, &created));
      slot = created.release();
    }
    pool = slot;
  }
  *runner = [pool](std::function<void()> closure) { pool->Schedule(std::move(closure)); };
  return Status::OK();
}

Status IntraOpDevice(int num_threads, const Eigen::ThreadPoolDevice** device) {
  int threads = 0;
  TW_RETURN_IF_ERROR(ResolveThreads(num_threads, &threads));
  std::lock_guard<std::mutex> lock(pools_mu);
  IntraOpPool*& slot = IntraOpPools()[threads];
  if (slot == nullptr) {
    // Intra-op threads do not spin either. A spinning worker looks for
    // work for thousands of steal attempts after every parallel kernel,
    // holding a core the inter-op thread running the next node (or another
    // process) needs: the MLP Adam step of bench/train_step.py took 3.04 ms
    // of CPU per step with spinning and 2.61 without (means of five runs of
    // 300-500 steps each at load 9-10 on 2 cores), with the same best step.
    std::unique_ptr<Pool> created;
    TW_RETURN_IF_ERROR(NewPool(threads, /*allow_spinning=*/false, &created));
    slot = new IntraOpPool(created.release());
  }
  *device = &slot->device;
  return Status::OK();
}

}  // namespace tensorweave
