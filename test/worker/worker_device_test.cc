// OpenWorkerDevice reads COHORT_DEVICE as the agent sets it; a GPU slot opens the CUDA exchange
// module on its device, or says why it cannot (here without a GPU, or without the module in the
// sanitizer build). HasDeviceBlocks tells a plugin that put tensors on the device.
#include "runtime/worker/worker_device.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/common/host_memory_as_device.h"

namespace cohort {
namespace {

using ::testing::StartsWith;

TEST(WorkerDeviceTest, NoVariableOrCpuIsTheCpu) {
  for (const char* variable : {static_cast<const char*>(nullptr), "", "cpu"}) {
    absl::StatusOr<WorkerDevice> device = OpenWorkerDevice(variable);
    ASSERT_TRUE(device.ok()) << device.status();
    EXPECT_EQ(device->device.kind, COHORT_DEVICE_CPU);
    EXPECT_EQ(device->cuda, nullptr);
    EXPECT_EQ(device->stream(), nullptr);
  }
}

TEST(WorkerDeviceTest, AValueThatIsNoDeviceIsRefusedNamingTheVariable) {
  absl::StatusOr<WorkerDevice> device = OpenWorkerDevice("gpu0");
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(device.status().message(),
            "COHORT_DEVICE: 'gpu0' is not a device; expected cpu or cuda:N");
}

TEST(WorkerDeviceTest, AGpuSlotOpensItsDeviceOrSaysWhyNot) {
  absl::StatusOr<WorkerDevice> device = OpenWorkerDevice("cuda:0");
  if (device.ok()) {
    EXPECT_EQ(device->device.kind, COHORT_DEVICE_CUDA);
    ASSERT_NE(device->cuda, nullptr);
    EXPECT_NE(device->stream(), nullptr);
  } else {
    EXPECT_EQ(device.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(device.status().message()),
                StartsWith("this worker's slot is cuda:0, but that GPU cannot be used: "));
  }
}

TEST(WorkerDeviceTest, HasDeviceBlocksWhenAnyTensorIsOffTheCpu) {
  testing::HostMemoryAsDevice memory;
  auto host = TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 4}}, memory);
  auto mixed = TensorArena::Create({{"w", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CPU, 0}, 4},
                                    {"g", COHORT_DTYPE_FLOAT32, {COHORT_DEVICE_CUDA, 0}, 4}},
                                   memory);
  ASSERT_TRUE(host.ok() && mixed.ok());
  EXPECT_FALSE(HasDeviceBlocks(**host));
  EXPECT_TRUE(HasDeviceBlocks(**mixed));
}

}  // namespace
}  // namespace cohort
