// The main() of the gpu suite's GoogleTest binaries: exits 77 (skipped) where no CUDA device is
// usable, so the suite passes on machines without one; otherwise runs every test.
#include <cuda_runtime_api.h>

#include <cstdio>

#include "gtest/gtest.h"

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("skipped: no usable CUDA device\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
