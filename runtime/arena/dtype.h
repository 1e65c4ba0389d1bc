// Element types of tensors held by the runtime, as the SDK numbers them (COHORT_DTYPE_*).
#ifndef COHORT_RUNTIME_ARENA_DTYPE_H_
#define COHORT_RUNTIME_ARENA_DTYPE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "cohort/plugin.h"

namespace cohort {

// Bytes per element; INVALID_ARGUMENT for a value the SDK does not define.
absl::StatusOr<size_t> DtypeSize(cohort_dtype dtype);

// "float32", "float16", ...; "dtype(N)" for an unknown value.
std::string DtypeName(cohort_dtype dtype);

}  // namespace cohort

#endif  // COHORT_RUNTIME_ARENA_DTYPE_H_
