// BucketReducer's out-of-line members and the state helpers every reducer shares, host and CUDA
// alike. This file is compiled into the exchange library and into the CUDA exchange module, so
// the module carries its own BucketReducer vtable and typeinfo and needs nothing of its host (see
// runtime/module/runtime_module.h); keep what the module's reducers use from bucket_reducer.h
// here, and nothing that pulls in more of the runtime.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/exchange/bucket_reducer.h"

namespace cohort {

absl::Status BucketReducer::LoadState(absl::string_view state) {
  return absl::FailedPreconditionError(
      absl::StrCat("this gradient exchange keeps no compression state, and the checkpoint holds ",
                   state.size(), " bytes of it"));
}

void AppendFloats(const std::vector<float>& values, std::string* state) {
  state->append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

absl::StatusOr<std::vector<float>> StateFloats(absl::string_view state, uint64_t floats) {
  if (state.size() != floats * sizeof(float)) {
    return absl::FailedPreconditionError(absl::StrCat("the compression state holds ", state.size(),
                                                      " bytes; this exchange keeps ",
                                                      floats * sizeof(float)));
  }
  std::vector<float> values(floats);  // copied: `state` may sit at any address
  std::memcpy(values.data(), state.data(), state.size());
  return values;
}

}  // namespace cohort
