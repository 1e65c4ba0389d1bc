// OpenCudaUpdateKernels loads the CUDA optimizer module and opens its kernels on a device, or says
// why it cannot: here without a GPU (the module loads and its entry answers), or without the
// module (the sanitizer build has none).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/optim/device_update_kernels.h"

namespace cohort {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

TEST(OpenCudaUpdateKernelsTest, OpensOnADeviceOrSaysWhyNot) {
  absl::StatusOr<std::unique_ptr<DeviceUpdateKernels>> kernels = OpenCudaUpdateKernels(0, nullptr);
  if (kernels.ok()) {
    EXPECT_NE(*kernels, nullptr);
    return;
  }
  EXPECT_EQ(kernels.status().code(), absl::StatusCode::kUnavailable);
  // Either the module's entry ran and found no device, or there is no module to load.
  EXPECT_THAT(std::string(kernels.status().message()),
              AnyOf(HasSubstr("no usable CUDA device"), HasSubstr("CUDA device 0 does not exist"),
                    HasSubstr("no usable CUDA optimizer module")));
}

TEST(OpenCudaUpdateKernelsTest, ADeviceThatDoesNotExistIsRefused) {
  absl::StatusOr<std::unique_ptr<DeviceUpdateKernels>> kernels =
      OpenCudaUpdateKernels(4096, nullptr);
  ASSERT_FALSE(kernels.ok());
  EXPECT_EQ(kernels.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace cohort
