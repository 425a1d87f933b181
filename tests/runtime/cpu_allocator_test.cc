// CpuAllocator: TensorFlow's AllocatorStats over every tensor buffer, the
// bounded cache of large blocks that lets repeated steps reuse memory, and
// the per-thread tracker behind step stats' AllocatorMemoryUsed. The
// allocator is the process's, so each test looks at differences.
#include "runtime/framework/cpu_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {
namespace {

constexpr size_t kLarge = size_t{1} << 20;  // cached when freed

bool Aligned(const void* data) {
  return reinterpret_cast<uintptr_t>(data) % CpuAllocator::kAlignment == 0;
}

TEST(CpuAllocatorTest, StatsCountLiveTensorBuffers) {
  CpuAllocator* allocator = CpuAllocator::Get();
  allocator->ClearStats();
  const AllocatorStats before = allocator->GetStats();
  EXPECT_EQ(before.num_allocs, 0);
  EXPECT_EQ(before.largest_alloc_size, 0);
  EXPECT_EQ(before.peak_bytes_in_use, before.bytes_in_use);
  {
    Tensor small(DT_FLOAT, TensorShape({10}));
    Tensor big(DT_DOUBLE, TensorShape({1000}));
    const AllocatorStats during = allocator->GetStats();
    EXPECT_EQ(during.num_allocs, 2);
    EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 40 + 8000);
    EXPECT_EQ(during.largest_alloc_size, 8000);
    EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  }
  const AllocatorStats after = allocator->GetStats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.peak_bytes_in_use - before.bytes_in_use, 8040);
  EXPECT_FALSE(after.bytes_limit.has_value());
  allocator->ClearStats();
  EXPECT_EQ(allocator->GetStats().peak_bytes_in_use, after.bytes_in_use);
  EXPECT_NE(after.DebugString().find("MaxInUse:"), std::string::npos);
}

TEST(CpuAllocatorTest, StringBuffersAreCountedToo) {
  CpuAllocator* allocator = CpuAllocator::Get();
  const int64_t before = allocator->GetStats().bytes_in_use;
  {
    Tensor strings(DT_STRING, TensorShape({3}));
    strings.data<std::string>()[0] = std::string(100, 'x');  // owned by the element
    EXPECT_EQ(allocator->GetStats().bytes_in_use - before,
              static_cast<int64_t>(3 * sizeof(std::string)));
  }
  EXPECT_EQ(allocator->GetStats().bytes_in_use, before);
}

TEST(CpuAllocatorTest, EveryBlockIsAligned) {
  CpuAllocator* allocator = CpuAllocator::Get();
  for (size_t bytes : {size_t{1}, size_t{63}, size_t{64}, size_t{4097}, kLarge, kLarge + 1}) {
    void* data = allocator->AllocateRaw(bytes);
    ASSERT_NE(data, nullptr);
    EXPECT_TRUE(Aligned(data)) << bytes;
    static_cast<char*>(data)[bytes - 1] = 1;  // the whole size is usable
    allocator->DeallocateRaw(data, bytes);
  }
  allocator->DeallocateRaw(nullptr, 0);
  EXPECT_EQ(allocator->AllocateRaw(SIZE_MAX - 10), nullptr);  // refused, not wrapped
}

TEST(CpuAllocatorTest, LargeBlocksAreReusedWhileASessionUsesTheCache) {
  CpuAllocator* allocator = CpuAllocator::Get();
  CpuBufferCacheUser user;
  const int64_t reserved = allocator->GetStats().bytes_reserved;
  void* first = allocator->AllocateRaw(kLarge);
  allocator->DeallocateRaw(first, kLarge);
  EXPECT_EQ(allocator->GetStats().bytes_reserved - reserved, static_cast<int64_t>(kLarge));
  // Any request of the same page count gets the cached block back.
  void* second = allocator->AllocateRaw(kLarge - 100);
  EXPECT_EQ(second, first);
  EXPECT_EQ(allocator->GetStats().bytes_reserved, reserved);
  allocator->DeallocateRaw(second, kLarge - 100);
  // Small blocks go straight back to malloc.
  void* small = allocator->AllocateRaw(1000);
  allocator->DeallocateRaw(small, 1000);
  EXPECT_EQ(allocator->GetStats().bytes_reserved - reserved, static_cast<int64_t>(kLarge));
  allocator->ReleaseCache();
  EXPECT_EQ(allocator->GetStats().bytes_reserved, 0);
}

TEST(CpuAllocatorTest, NothingIsCachedWithoutAUser) {
  CpuAllocator* allocator = CpuAllocator::Get();
  {
    CpuBufferCacheUser user;
    allocator->DeallocateRaw(allocator->AllocateRaw(kLarge), kLarge);
    EXPECT_GT(allocator->GetStats().bytes_reserved, 0);
  }  // the last user frees the cache
  EXPECT_EQ(allocator->GetStats().bytes_reserved, 0);
  allocator->DeallocateRaw(allocator->AllocateRaw(kLarge), kLarge);
  EXPECT_EQ(allocator->GetStats().bytes_reserved, 0);
}

TEST(CpuAllocatorTest, ASessionUsesTheCacheUntilItCloses) {
  CpuAllocator* allocator = CpuAllocator::Get();
  std::unique_ptr<Session> session;
  ASSERT_TRUE(NewSession(SessionOptions(), &session).ok());
  allocator->DeallocateRaw(allocator->AllocateRaw(kLarge), kLarge);
  EXPECT_GT(allocator->GetStats().bytes_reserved, 0);
  ASSERT_TRUE(session->Close().ok());
  EXPECT_EQ(allocator->GetStats().bytes_reserved, 0);
  allocator->DeallocateRaw(allocator->AllocateRaw(kLarge), kLarge);
  EXPECT_EQ(allocator->GetStats().bytes_reserved, 0);
}

TEST(CpuAllocatorTest, TheCacheKeepsToItsLimit) {
  CpuAllocator* allocator = CpuAllocator::Get();
  CpuBufferCacheUser user;
  allocator->SetCacheLimit(3 * kLarge);
  std::vector<void*> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(allocator->AllocateRaw(kLarge));
  for (void* block : blocks) allocator->DeallocateRaw(block, kLarge);
  EXPECT_EQ(allocator->GetStats().bytes_reserved, static_cast<int64_t>(3 * kLarge));
  allocator->SetCacheLimit(0);  // off: frees what it held
  EXPECT_EQ(allocator->GetStats().bytes_reserved, 0);
  allocator->DeallocateRaw(allocator->AllocateRaw(kLarge), kLarge);
  EXPECT_EQ(allocator->GetStats().bytes_reserved, 0);
  allocator->SetCacheLimit(size_t{1} << 30);
}

TEST(CpuAllocatorTest, ThreadsAllocateAndFreeConcurrently) {
  CpuAllocator* allocator = CpuAllocator::Get();
  CpuBufferCacheUser user;
  const int64_t before = allocator->GetStats().bytes_in_use;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([allocator, t] {
      for (int i = 0; i < 200; ++i) {
        const size_t bytes = (i % 2 == 0 ? kLarge : 1000) + t * 4096;
        auto* data = static_cast<unsigned char*>(allocator->AllocateRaw(bytes));
        data[0] = data[bytes - 1] = static_cast<unsigned char>(t);
        allocator->DeallocateRaw(data, bytes);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(allocator->GetStats().bytes_in_use, before);
  EXPECT_GT(allocator->GetStats().bytes_reserved, 0);
}

TEST(CpuAllocatorTest, TrackerRecordsWhatItsThreadAllocates) {
  CpuAllocator* allocator = CpuAllocator::Get();
  Tensor earlier(DT_FLOAT, TensorShape({4}));
  ScopedAllocationTracker tracker;
  Tensor kept(DT_FLOAT, TensorShape({100}));
  { Tensor temporary(DT_FLOAT, TensorShape({1000})); }
  earlier = Tensor();  // allocated before the tracker: not its business
  std::thread other([] { Tensor elsewhere(DT_FLOAT, TensorShape({10000})); });
  other.join();
  EXPECT_EQ(tracker.total_bytes(), 400 + 4000);
  EXPECT_EQ(tracker.peak_bytes(), 4400);
  EXPECT_EQ(tracker.live_bytes(), 400);
  {
    ScopedAllocationTracker inner;  // nested: only the innermost records
    void* data = allocator->AllocateRaw(8);
    allocator->DeallocateRaw(data, 8);
    EXPECT_EQ(inner.total_bytes(), 8);
  }
  EXPECT_EQ(tracker.total_bytes(), 4400);
}

}  // namespace
}  // namespace tensorweave
