// CpuAllocator: where the memory of every Tensor buffer tensorweave
// allocates comes from (TensorBuffer::Allocate and the string/resource
// buffers), with TensorFlow's AllocatorStats and a bounded cache of large
// blocks so that repeated steps reuse memory instead of mapping it afresh.
//
//   void* data = CpuAllocator::Get()->AllocateRaw(bytes);   // 64-byte aligned
//   ...
//   CpuAllocator::Get()->DeallocateRaw(data, bytes);         // the same bytes
//   AllocatorStats stats = CpuAllocator::Get()->GetStats();  // peak_bytes_in_use, ...
//
// Why a cache: glibc serves a large request with a fresh mmap (or by growing
// and later trimming its heap), so each step of a model with big
// activations faults every page of them in again (bench/memory.py: the
// tutorial CNN's training step took ~600 minor faults and 4 ms of system
// time per step without the cache, none with it). While a session is open
// (it holds a CpuBufferCacheUser), blocks of at least kCachedBlockMinBytes
// go back to a free list keyed by their page count instead, up to a cap on
// the bytes held (TENSORWEAVE_CPU_BUFFER_CACHE_MB, default min(1 GiB, an
// eighth of the machine's memory); 0 turns the cache off). When the last user goes, the
// list is freed and large blocks go straight back to malloc again. One cache
// serves every session of the process: steps repeat the same sizes, so a
// list per size reuses as well as an arena per signature would, and memory
// one session frees can serve another.
//
// Statistics count live buffers (bytes as requested), as TensorFlow's
// allocators do; bytes_reserved is what the cache holds besides.
#ifndef TENSORWEAVE_FRAMEWORK_CPU_ALLOCATOR_H_
#define TENSORWEAVE_FRAMEWORK_CPU_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tensorweave {

// TensorFlow's AllocatorStats (tensorflow/core/framework/allocator.h).
struct AllocatorStats {
  int64_t num_allocs = 0;              // allocations since the last ClearStats
  int64_t bytes_in_use = 0;            // live buffers
  int64_t peak_bytes_in_use = 0;       // most bytes_in_use since the last ClearStats
  int64_t largest_alloc_size = 0;      // since the last ClearStats
  std::optional<int64_t> bytes_limit;  // none: bounded by the machine
  int64_t bytes_reserved = 0;          // free blocks kept for reuse
  int64_t peak_bytes_reserved = 0;

  std::string DebugString() const;
};

class CpuAllocator {
 public:
  // Blocks this large or larger are kept for reuse when freed.
  static constexpr size_t kCachedBlockMinBytes = size_t{64} << 10;

  // The process's one CPU allocator (never destroyed: buffers may outlive
  // every static).
  static CpuAllocator* Get();

  // "cpu", the allocator_name step statistics show.
  static const char* Name() { return "cpu"; }

  // `bytes` of uninitialized memory aligned to 64 bytes; null when the
  // system has no memory to give.
  void* AllocateRaw(size_t bytes);
  // Gives back what AllocateRaw(bytes) returned (null is a no-op).
  void DeallocateRaw(void* data, size_t bytes);

  AllocatorStats GetStats() const;
  // As TensorFlow's ClearStats: num_allocs and largest_alloc_size restart
  // from zero and the peak from what is in use now.
  void ClearStats();

  // Frees every cached block (the next large allocations map fresh memory).
  void ReleaseCache();
  // Cap on the bytes the cache may hold (tests; 0 turns it off). Frees what
  // is cached now.
  void SetCacheLimit(size_t bytes);

  static constexpr size_t kAlignment = 64;

 private:
  friend class CpuBufferCacheUser;
  CpuAllocator();
  class Impl;
  Impl* impl_;
};

// While one of these is alive, freed large blocks are cached for reuse; the
// last one to go frees the cache. A DirectSession holds one until it closes,
// a WorkerSession while it lives.
class CpuBufferCacheUser {
 public:
  CpuBufferCacheUser();
  ~CpuBufferCacheUser();
  CpuBufferCacheUser(const CpuBufferCacheUser&) = delete;
  CpuBufferCacheUser& operator=(const CpuBufferCacheUser&) = delete;
};

// Records what the current thread allocates with the CpuAllocator while it
// is alive: the memory one kernel took, for RunMetadata.step_stats
// (TensorFlow's AllocatorMemoryUsed total, peak and live bytes). Nests; only
// the innermost tracker on a thread records. Must be destroyed on the thread
// that made it.
class ScopedAllocationTracker {
 public:
  ScopedAllocationTracker();
  ~ScopedAllocationTracker();
  ScopedAllocationTracker(const ScopedAllocationTracker&) = delete;
  ScopedAllocationTracker& operator=(const ScopedAllocationTracker&) = delete;

  int64_t total_bytes() const { return total_bytes_; }
  int64_t peak_bytes() const { return peak_bytes_; }
  // Allocated under this tracker and not freed on this thread since.
  int64_t live_bytes() const { return live_bytes_; }

 private:
  friend class CpuAllocator;
  void Allocated(void* data, size_t bytes);
  void Deallocated(void* data, size_t bytes);

  ScopedAllocationTracker* previous_;
  // Blocks allocated under this tracker and still live: a kernel makes a
  // handful, so a vector is the cheapest set.
  std::vector<std::pair<void*, size_t>> live_;
  int64_t total_bytes_ = 0;
  int64_t peak_bytes_ = 0;
  int64_t live_bytes_ = 0;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_CPU_ALLOCATOR_H_
