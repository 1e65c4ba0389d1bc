#include "runtime/arena/device_memory.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cohort {

absl::Status ValidateDevice(cohort_device device) {
  if (device.kind != COHORT_DEVICE_CPU && device.kind != COHORT_DEVICE_CUDA) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown device kind ", device.kind, "; allowed: 1 (cpu), 2 (cuda)"));
  }
  if (device.ordinal < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative device ordinal ", device.ordinal));
  }
  return absl::OkStatus();
}

std::string DeviceName(cohort_device device) {
  if (device.kind == COHORT_DEVICE_CPU) return "cpu";
  if (device.kind == COHORT_DEVICE_CUDA) return absl::StrCat("cuda:", device.ordinal);
  return absl::StrCat("device(kind ", device.kind, ")");
}

absl::StatusOr<cohort_device> ParseDeviceName(absl::string_view name) {
  if (name == "cpu") return cohort_device{COHORT_DEVICE_CPU, 0};
  absl::string_view ordinal_text = name;
  int32_t ordinal = -1;
  if (absl::ConsumePrefix(&ordinal_text, "cuda:") && !ordinal_text.empty() &&
      ordinal_text.find_first_not_of("0123456789") == absl::string_view::npos &&
      absl::SimpleAtoi(ordinal_text, &ordinal)) {
    return cohort_device{COHORT_DEVICE_CUDA, ordinal};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", absl::CHexEscape(name), "' is not a device; expected cpu or cuda:N"));
}

absl::StatusOr<void*> CpuMemory::Allocate(size_t bytes) {
  if (bytes == 0) return absl::InvalidArgumentError("cannot allocate 0 bytes");
  const size_t rounded = (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  void* ptr = std::aligned_alloc(kArenaAlignment, rounded);
  if (ptr == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of host memory allocating ", bytes, " bytes for a tensor arena"));
  }
  std::memset(ptr, 0, rounded);
  return ptr;
}

void CpuMemory::Free(void* ptr) { std::free(ptr); }

absl::Status CpuMemory::CopyToHost(void* to, const void* from, size_t bytes) {
  if (bytes != 0) std::memcpy(to, from, bytes);
  return absl::OkStatus();
}

absl::Status CpuMemory::CopyFromHost(void* to, const void* from, size_t bytes) {
  if (bytes != 0) std::memcpy(to, from, bytes);
  return absl::OkStatus();
}

absl::Status CpuMemory::Zero(void* ptr, size_t bytes) {
  std::memset(ptr, 0, bytes);
  return absl::OkStatus();
}

absl::StatusOr<DeviceMemory*> CpuOnlyMemoryProvider::For(cohort_device device) {
  if (absl::Status s = ValidateDevice(device); !s.ok()) return s;
  if (device.kind == COHORT_DEVICE_CPU) return &cpu_;
  return absl::UnavailableError(absl::StrCat("CUDA device ", device.ordinal,
                                             " requested, but this host serves CPU memory only"));
}

}  // namespace cohort
