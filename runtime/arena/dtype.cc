#include "runtime/arena/dtype.h"

#include "absl/strings/str_cat.h"

namespace cohort {

absl::StatusOr<size_t> DtypeSize(cohort_dtype dtype) {
  switch (dtype) {
    case COHORT_DTYPE_FLOAT32:
      return 4;
    case COHORT_DTYPE_FLOAT16:
    case COHORT_DTYPE_BFLOAT16:
      return 2;
    case COHORT_DTYPE_FLOAT64:
    case COHORT_DTYPE_INT64:
      return 8;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown dtype ", dtype,
          "; allowed: 1 (float32), 2 (float16), 3 (bfloat16), 4 (float64), 5 (int64, state only)"));
  }
}

std::string DtypeName(cohort_dtype dtype) {
  switch (dtype) {
    case COHORT_DTYPE_FLOAT32:
      return "float32";
    case COHORT_DTYPE_FLOAT16:
      return "float16";
    case COHORT_DTYPE_BFLOAT16:
      return "bfloat16";
    case COHORT_DTYPE_FLOAT64:
      return "float64";
    case COHORT_DTYPE_INT64:
      return "int64";
    default:
      return absl::StrCat("dtype(", dtype, ")");
  }
}

}  // namespace cohort
