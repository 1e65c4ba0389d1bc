#include "runtime/arena/block_staging.h"

#include "absl/strings/str_cat.h"
#include "runtime/arena/device_memory.h"

namespace cohort {
namespace {

void* PartOf(const ArenaBlock& block, BlockPart part) {
  return part == BlockPart::kParameters ? block.data : block.grad;
}

absl::Status Described(absl::Status status, const ArenaBlock& block, absl::string_view what) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(what, " of the ", DeviceName(block.device),
                                                  " tensors: ", status.message()));
}

}  // namespace

absl::Status CopyBlockToHost(const ArenaBlock& block, BlockPart part, void* to,
                             StagedHostCopies* staged) {
  return Described(CopyToHostVia(staged, *block.memory, to, PartOf(block, part), BlockBytes(block)),
                   block, "copying to the host");
}

absl::Status CopyBlockFromHost(const ArenaBlock& block, BlockPart part, const void* from) {
  return Described(block.memory->CopyFromHost(PartOf(block, part), from, BlockBytes(block)), block,
                   "copying from the host");
}

}  // namespace cohort
