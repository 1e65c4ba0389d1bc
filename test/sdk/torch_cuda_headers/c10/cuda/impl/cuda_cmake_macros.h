// The one header of LibTorch's CUDA part that its build generates, which Debian's CPU-only
// libtorch-dev lacks; for torch_cuda_compile_check.cc alone. It says c10_cuda is a shared library,
// as in PyTorch's own builds.
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
