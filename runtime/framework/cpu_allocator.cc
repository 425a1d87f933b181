#include "runtime/framework/cpu_allocator.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace tensorweave {

namespace {

constexpr size_t kAlignment = CpuAllocator::kAlignment;
// Cached blocks are rounded up to whole pages so that a block serves every
// request of its page count, not only its exact byte size.
constexpr size_t kCachedBlockGranule = 4096;

thread_local ScopedAllocationTracker* current_tracker = nullptr;

// malloc over-allocated by one alignment unit and aligned by hand (glibc's
// aligned_alloc takes a slow memalign path: about 110 ns against 30 ns per
// allocation and free, and small tensors are allocated on every step). The
// aligned address is always past the raw one, so the byte before it holds
// the distance back, and DeallocateRaw needs only the aligned pointer.
void* AlignedMalloc(size_t bytes) {
  if (bytes > SIZE_MAX - kAlignment) return nullptr;
  auto* raw = static_cast<unsigned char*>(std::malloc(bytes + kAlignment));
  if (raw == nullptr) return nullptr;
  const uintptr_t address = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (address + kAlignment) & ~uintptr_t{kAlignment - 1};
  auto* data = reinterpret_cast<unsigned char*>(aligned);
  data[-1] = static_cast<unsigned char>(data - raw);
  return data;
}

void AlignedFree(void* data) {
  auto* aligned = static_cast<unsigned char*>(data);
  std::free(aligned - aligned[-1]);
}

size_t CachedBlockBytes(size_t bytes) {
  return (bytes + kCachedBlockGranule - 1) / kCachedBlockGranule * kCachedBlockGranule;
}

size_t DefaultCacheLimit() {
  if (const char* megabytes = std::getenv("TENSORWEAVE_CPU_BUFFER_CACHE_MB")) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(megabytes, &end, 10);
    if (end != megabytes && *end == '\0') return static_cast<size_t>(value) << 20;
  }
  size_t limit = size_t{1} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    limit = std::min<uint64_t>(limit, static_cast<uint64_t>(pages) * page_size / 8);
  }
  return limit;
}

void RaiseTo(std::atomic<int64_t>* maximum, int64_t value) {
  int64_t seen = maximum->load(std::memory_order_relaxed);
  while (value > seen && !maximum->compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

class CpuAllocator::Impl {
 public:
  std::atomic<int64_t> num_allocs{0};
  std::atomic<int64_t> bytes_in_use{0};
  std::atomic<int64_t> peak_bytes_in_use{0};
  std::atomic<int64_t> largest_alloc_size{0};

  // A cached block of `block_bytes` or null.
  void* TakeCached(size_t block_bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = free_blocks_.find(block_bytes);
    if (found == free_blocks_.end() || found->second.empty()) return nullptr;
    void* data = found->second.back();
    found->second.pop_back();
    cached_bytes_ -= block_bytes;
    return data;
  }

  // False when nobody uses the cache or it is full (the caller frees the
  // block).
  bool Keep(void* data, size_t block_bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (users_ == 0 || cached_bytes_ + block_bytes > limit_) return false;
    free_blocks_[block_bytes].push_back(data);
    cached_bytes_ += block_bytes;
    peak_cached_bytes_ = std::max(peak_cached_bytes_, cached_bytes_);
    return true;
  }

  void Release() {
    std::unordered_map<size_t, std::vector<void*>> blocks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocks.swap(free_blocks_);
      cached_bytes_ = 0;
    }
    for (auto& [bytes, list] : blocks) {
      for (void* data : list) AlignedFree(data);
    }
  }

  void SetLimit(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      limit_ = bytes;
    }
    Release();
  }

  void AddUser() {
    std::lock_guard<std::mutex> lock(mu_);
    ++users_;
  }

  void RemoveUser() {
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = --users_ == 0;
    }
    if (last) Release();
  }

  void Reserved(int64_t* bytes, int64_t* peak) {
    std::lock_guard<std::mutex> lock(mu_);
    *bytes = static_cast<int64_t>(cached_bytes_);
    *peak = static_cast<int64_t>(peak_cached_bytes_);
  }

  void ClearPeakReserved() {
    std::lock_guard<std::mutex> lock(mu_);
    peak_cached_bytes_ = cached_bytes_;
  }

 private:
  std::mutex mu_;
  int users_ = 0;
  size_t limit_ = DefaultCacheLimit();
  size_t cached_bytes_ = 0;
  size_t peak_cached_bytes_ = 0;
  std::unordered_map<size_t, std::vector<void*>> free_blocks_;
};

CpuAllocator::CpuAllocator() : impl_(new Impl) {}

CpuAllocator* CpuAllocator::Get() {
  static CpuAllocator* allocator = new CpuAllocator();
  return allocator;
}

void* CpuAllocator::AllocateRaw(size_t bytes) {
  // No machine has this much; refusing keeps the rounding below from wrapping.
  if (bytes > SIZE_MAX / 2) return nullptr;
  void* data = nullptr;
  if (bytes >= kCachedBlockMinBytes) {
    const size_t block_bytes = CachedBlockBytes(bytes);
    data = impl_->TakeCached(block_bytes);
    if (data == nullptr) data = AlignedMalloc(block_bytes);
  } else {
    data = AlignedMalloc(bytes);
  }
  if (data == nullptr) return nullptr;
  const auto size = static_cast<int64_t>(bytes);
  impl_->num_allocs.fetch_add(1, std::memory_order_relaxed);
  const int64_t in_use = impl_->bytes_in_use.fetch_add(size, std::memory_order_relaxed) + size;
  RaiseTo(&impl_->peak_bytes_in_use, in_use);
  RaiseTo(&impl_->largest_alloc_size, size);
  if (current_tracker != nullptr) current_tracker->Allocated(data, bytes);
  return data;
}

void CpuAllocator::DeallocateRaw(void* data, size_t bytes) {
  if (data == nullptr) return;
  if (current_tracker != nullptr) current_tracker->Deallocated(data, bytes);
  impl_->bytes_in_use.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  if (bytes >= kCachedBlockMinBytes && impl_->Keep(data, CachedBlockBytes(bytes))) return;
  AlignedFree(data);
}

AllocatorStats CpuAllocator::GetStats() const {
  AllocatorStats stats;
  stats.num_allocs = impl_->num_allocs.load(std::memory_order_relaxed);
  stats.bytes_in_use = impl_->bytes_in_use.load(std::memory_order_relaxed);
  stats.peak_bytes_in_use = impl_->peak_bytes_in_use.load(std::memory_order_relaxed);
  stats.largest_alloc_size = impl_->largest_alloc_size.load(std::memory_order_relaxed);
  impl_->Reserved(&stats.bytes_reserved, &stats.peak_bytes_reserved);
  return stats;
}

void CpuAllocator::ClearStats() {
  impl_->num_allocs.store(0, std::memory_order_relaxed);
  impl_->largest_alloc_size.store(0, std::memory_order_relaxed);
  impl_->peak_bytes_in_use.store(impl_->bytes_in_use.load(std::memory_order_relaxed),
                                 std::memory_order_relaxed);
  impl_->ClearPeakReserved();
}

void CpuAllocator::ReleaseCache() { impl_->Release(); }

void CpuAllocator::SetCacheLimit(size_t bytes) { impl_->SetLimit(bytes); }

CpuBufferCacheUser::CpuBufferCacheUser() { CpuAllocator::Get()->impl_->AddUser(); }

CpuBufferCacheUser::~CpuBufferCacheUser() { CpuAllocator::Get()->impl_->RemoveUser(); }

std::string AllocatorStats::DebugString() const {
  std::ostringstream out;
  out << "Limit:            " << bytes_limit.value_or(0) << "\n"
      << "InUse:            " << bytes_in_use << "\n"
      << "MaxInUse:         " << peak_bytes_in_use << "\n"
      << "NumAllocs:        " << num_allocs << "\n"
      << "MaxAllocSize:     " << largest_alloc_size << "\n"
      << "Reserved:         " << bytes_reserved << "\n"
      << "PeakReserved:     " << peak_bytes_reserved << "\n";
  return out.str();
}

ScopedAllocationTracker::ScopedAllocationTracker() : previous_(current_tracker) {
  current_tracker = this;
}

ScopedAllocationTracker::~ScopedAllocationTracker() { current_tracker = previous_; }

void ScopedAllocationTracker::Allocated(void* data, size_t bytes) {
  live_.emplace_back(data, bytes);
  total_bytes_ += static_cast<int64_t>(bytes);
  live_bytes_ += static_cast<int64_t>(bytes);
  peak_bytes_ = std::max(peak_bytes_, live_bytes_);
}

void ScopedAllocationTracker::Deallocated(void* data, size_t bytes) {
  auto found =
      std::find_if(live_.begin(), live_.end(),
                   [data](const std::pair<void*, size_t>& block) { return block.first == data; });
  if (found == live_.end()) return;  // allocated before this tracker
  live_bytes_ -= static_cast<int64_t>(bytes);
  *found = live_.back();
  live_.pop_back();
}

}  // namespace tensorweave
