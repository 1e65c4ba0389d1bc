#include "absl/strings/str_cat.h"
#include "runtime/config/experiment_config.h"

namespace cohort {

std::string DescribeLength(const Length& length) {
  const char* unit = "batch";
  switch (length.unit) {
    case LengthUnit::kBatches:
      unit = length.value == 1 ? "batch" : "batches";
      break;
    case LengthUnit::kRecords:
      unit = length.value == 1 ? "record" : "records";
      break;
    case LengthUnit::kEpochs:
      unit = length.value == 1 ? "epoch" : "epochs";
      break;
  }
  return absl::StrCat(length.value, " ", unit);
}

const char* MaxLengthKey(const SearcherConfig& searcher) {
  return searcher.max_length_as_time ? "searcher.max_time" : "searcher.max_length";
}

}  // namespace cohort
