// Fuzz target: the checkpoint manifest reader, as a resume or `cohort checkpoint` runs it on a
// manifest file from shared storage (which a crash, a full disk or a person may have damaged).
// Contract checked: any bytes either decode or are refused with DATA_LOSS (FAILED_PRECONDITION
// for a newer format), never crash; whatever decodes re-encodes to a manifest that decodes to the
// same CheckpointInfo.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "runtime/checkpoint/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<CheckpointInfo> info = DecodeManifest(bytes);
  if (!info.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(info.status()) || absl::IsFailedPrecondition(info.status()),
               info.status().ToString());
    return 0;
  }
  absl::StatusOr<CheckpointInfo> again = DecodeManifest(EncodeManifest(*info));
  FUZZ_CHECK(again.ok(), again.status().ToString());
  FUZZ_CHECK(*again == *info, info->id);
  return 0;
}
