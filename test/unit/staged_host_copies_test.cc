// StagedHostCopies on host memory posing as a device (CountingDeviceMemory): a staged copy
// reaches its destination only at Land, later captures of the same sizes reuse the page-locked
// memory (or a reserve taken ahead), and host memory, or a device whose page-locked memory is
// refused, is copied straight.
#include "runtime/arena/staged_host_copies.h"

#include <cstring>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "test/common/host_memory_as_device.h"

namespace cohort {
namespace {

using testing::CountingDeviceMemory;

// `text`'s bytes in memory of `device`, freed with the object.
class DeviceBytes {
 public:
  DeviceBytes(DeviceMemory& device, const std::string& text) : device_(device), size_(text.size()) {
    absl::StatusOr<void*> memory = device.Allocate(text.size());
    EXPECT_TRUE(memory.ok()) << memory.status();
    data_ = *memory;
    EXPECT_TRUE(device.CopyFromHost(data_, text.data(), text.size()).ok());
  }
  ~DeviceBytes() { device_.Free(data_); }
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  DeviceMemory& device_;
  void* data_ = nullptr;
  size_t size_;
};

TEST(StagedHostCopiesTest, AStagedCopyReachesItsDestinationOnlyAtLand) {
  CountingDeviceMemory device;
  DeviceBytes source(device, "parameters of the step");
  std::string destination(source.size(), '.');
  StagedHostCopies staged;
  ASSERT_TRUE(staged.Copy(device, destination.data(), source.data(), source.size()).ok());
  EXPECT_EQ(destination, std::string(source.size(), '.'));
  EXPECT_EQ(staged.staged(), 1u);
  EXPECT_EQ(device.pinned_held, 1);
  EXPECT_EQ(device.copies_to_host, 1) << "one device copy, into the page-locked memory";
  staged.Land();
  EXPECT_EQ(destination, "parameters of the step");
  EXPECT_EQ(staged.staged(), 0u);
  EXPECT_TRUE(staged.pinning_error().ok());
}

TEST(StagedHostCopiesTest, LaterCapturesOfTheSameSizesReuseThePageLockedMemory) {
  CountingDeviceMemory device;
  DeviceBytes weights(device, std::string(1000, 'w'));
  DeviceBytes momentum(device, std::string(3000, 'm'));
  {
    StagedHostCopies staged;
    for (int capture = 0; capture < 3; ++capture) {
      std::string first(1000, '.');
      std::string second(3000, '.');
      ASSERT_TRUE(staged.Copy(device, first.data(), weights.data(), 1000).ok());
      ASSERT_TRUE(staged.Copy(device, second.data(), momentum.data(), 3000).ok());
      staged.Land();
      EXPECT_EQ(first, std::string(1000, 'w'));
      EXPECT_EQ(second, std::string(3000, 'm'));
    }
    EXPECT_EQ(device.pinned_allocations, 2) << "the first capture's, kept";
    EXPECT_EQ(staged.pinned_bytes(), 4000u);

    // Copies of other sizes are carved where they fit (2000 bytes in the 3000 of the second
    // copy's memory), and new memory is taken for the rest (1000 bytes after them do not fit).
    std::string larger(2000, '.');
    std::string smaller(1000, '.');
    DeviceBytes grown(device, std::string(2000, 'g'));
    ASSERT_TRUE(staged.Copy(device, larger.data(), grown.data(), 2000).ok());
    ASSERT_TRUE(staged.Copy(device, smaller.data(), weights.data(), 1000).ok());
    staged.Land();
    EXPECT_EQ(larger, std::string(2000, 'g'));
    EXPECT_EQ(smaller, std::string(1000, 'w'));
    EXPECT_EQ(device.pinned_allocations, 3);
    EXPECT_EQ(staged.pinned_bytes(), 5000u);
  }
  EXPECT_EQ(device.pinned_held, 0) << "freed with the copies";
}

// Reserved ahead, the page-locked memory is taken once, off the caller's thread, and every capture
// carves its copies out of it.
TEST(StagedHostCopiesTest, ReservedMemoryHoldsEveryCapturesCopies) {
  CountingDeviceMemory device;
  DeviceBytes weights(device, std::string(1000, 'w'));
  DeviceBytes momentum(device, std::string(3001, 'm'));
  {
    StagedHostCopies staged;
    staged.Reserve(device, StagedHostCopies::BytesFor(4001, 2));
    staged.Reserve(device, 1 << 20);  // once only
    for (int capture = 0; capture < 3; ++capture) {
      std::string first(1000, '.');
      std::string second(3001, '.');
      ASSERT_TRUE(staged.Copy(device, first.data(), weights.data(), 1000).ok());
      ASSERT_TRUE(staged.Copy(device, second.data(), momentum.data(), 3001).ok());
      EXPECT_EQ(staged.staged(), 2u);
      staged.Land();
      EXPECT_EQ(first, std::string(1000, 'w'));
      EXPECT_EQ(second, std::string(3001, 'm'));
    }
    EXPECT_EQ(device.pinned_allocations, 1) << "the reserve's alone";
    EXPECT_EQ(staged.pinned_bytes(), StagedHostCopies::BytesFor(4001, 2));
  }
  EXPECT_EQ(device.pinned_held, 0);

  // A reserve refused: copies go straight, and the error is kept.
  device.refuse_pinning = true;
  StagedHostCopies refused;
  refused.Reserve(device, 4096);
  std::string destination(1000, '.');
  ASSERT_TRUE(refused.Copy(device, destination.data(), weights.data(), 1000).ok());
  EXPECT_EQ(destination, std::string(1000, 'w'));
  EXPECT_EQ(refused.staged(), 0u);
  EXPECT_EQ(refused.pinning_error().code(), absl::StatusCode::kResourceExhausted);
}

TEST(StagedHostCopiesTest, HostMemoryIsCopiedStraight) {
  CpuMemory host;
  DeviceBytes source(host, "on the host");
  std::string destination(source.size(), '.');
  StagedHostCopies staged;
  ASSERT_TRUE(staged.Copy(host, destination.data(), source.data(), source.size()).ok());
  EXPECT_EQ(destination, "on the host");
  EXPECT_EQ(staged.staged(), 0u);
  EXPECT_EQ(staged.pinned_bytes(), 0u);
  EXPECT_TRUE(staged.pinning_error().ok());
}

TEST(StagedHostCopiesTest, RefusedPageLockedMemoryIsCopiedStraightAndSaysWhy) {
  CountingDeviceMemory device;
  device.refuse_pinning = true;
  DeviceBytes source(device, "no pinning");
  std::string destination(source.size(), '.');
  StagedHostCopies staged;
  ASSERT_TRUE(staged.Copy(device, destination.data(), source.data(), source.size()).ok());
  EXPECT_EQ(destination, "no pinning");
  EXPECT_EQ(staged.staged(), 0u);
  EXPECT_EQ(staged.pinning_error().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(staged.pinning_error().message().find("no page-locked memory"), std::string::npos);

  // It does not ask again, even once the device would give it.
  device.refuse_pinning = false;
  ASSERT_TRUE(staged.Copy(device, destination.data(), source.data(), source.size()).ok());
  EXPECT_EQ(staged.staged(), 0u);
  EXPECT_EQ(device.pinned_allocations, 0);
}

TEST(StagedHostCopiesTest, DiscardForgetsTheCopiesNotLanded) {
  CountingDeviceMemory device;
  DeviceBytes source(device, "dropped");
  std::string destination(source.size(), '.');
  StagedHostCopies staged;
  ASSERT_TRUE(staged.Copy(device, destination.data(), source.data(), source.size()).ok());
  staged.Discard();
  staged.Land();
  EXPECT_EQ(destination, ".......");
  EXPECT_EQ(device.pinned_held, 1) << "the memory is kept for the next capture";
}

}  // namespace
}  // namespace cohort
