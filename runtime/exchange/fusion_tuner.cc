#include "runtime/exchange/fusion_tuner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cohort {
namespace {

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

std::vector<BucketLimits> FusionCandidates(const TensorArena& arena, uint64_t threshold_bytes) {
  const uint64_t gradient = GradientBytes(arena);
  const BucketLimits fitted = FitBucketLimits(arena, threshold_bytes);
  std::vector<uint64_t> sizes = {fitted.bucket_bytes};
  for (uint64_t size = kSmallestCandidateBytes; size <= threshold_bytes; size *= 4) {
    sizes.push_back(size);
    if (size >= gradient) break;
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

  std::vector<BucketLimits> candidates;
  std::vector<std::vector<GradientBucket>> plans;
  for (uint64_t size : sizes) {
    if (!candidates.empty() && candidates.back().bucket_bytes >= gradient) break;
    const BucketLimits limits{size, std::min(size, fitted.first_bucket_bytes)};
    absl::StatusOr<std::vector<GradientBucket>> plan =
        PlanBuckets(arena, limits.bucket_bytes, limits.first_bucket_bytes);
    // An arena PlanBuckets refuses is refused again, and reported, when the exchange plans it.
    if (!plan.ok()) return {fitted};
    if (std::find(plans.begin(), plans.end(), *plan) != plans.end()) continue;
    plans.push_back(*std::move(plan));
    candidates.push_back(limits);
  }
  if (candidates.empty()) candidates.push_back(fitted);
  return candidates;
}

FusionTuner::FusionTuner(std::vector<BucketLimits> candidates)
    : candidates_(std::move(candidates)), decided_(candidates_.size() <= 1) {
  if (candidates_.empty()) candidates_.push_back(BucketLimits{});
}

FusionTuner::Step FusionTuner::Record(double seconds) {
  if (decided_ || medians_.size() == candidates_.size()) return Step::kSame;
  if (++batches_on_current_ <= kWarmupBatches) return Step::kSame;
  samples_.push_back(seconds);
  if (samples_.size() < kMeasuredBatches) return Step::kSame;
  medians_.push_back(Median(std::exchange(samples_, {})));
  batches_on_current_ = 0;
  if (medians_.size() == candidates_.size()) return Step::kAllMeasured;
  ++current_;
  return Step::kNextCandidate;
}

size_t FusionTuner::Decide(absl::Span<const double> seconds) {
  size_t best = 0;
  for (size_t i = 1; i < std::min(seconds.size(), candidates_.size()); ++i) {
    if (seconds[i] < seconds[best]) best = i;
  }
  current_ = best;
  decided_ = true;
  return best;
}

bool FusionTuner::Adopt(const BucketLimits& limits, uint64_t threshold_bytes) {
  if (limits.bucket_bytes > threshold_bytes) return false;
  auto found = std::find(candidates_.begin(), candidates_.end(), limits);
  if (found == candidates_.end()) found = candidates_.insert(candidates_.end(), limits);
  current_ = static_cast<size_t>(found - candidates_.begin());
  decided_ = true;
  return true;
}

std::string FusionTuner::Describe(absl::Span<const double> seconds) const {
  std::string text;
  for (size_t i = 0; i < candidates_.size() && i < seconds.size(); ++i) {
    absl::StrAppendFormat(&text, "%s%s %.2f ms%s", i == 0 ? "" : ", ",
                          BucketBytesText(candidates_[i].bucket_bytes), seconds[i] * 1e3,
                          decided_ && i == current_ ? " (kept)" : "");
  }
  return text;
}

std::string BucketBytesText(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 20)) {
    if (bytes % (uint64_t{1} << 20) == 0) return absl::StrCat(bytes >> 20, " MiB");
    return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  if (bytes % 1024 == 0) return absl::StrCat(bytes >> 10, " KiB");
  return absl::StrCat(bytes, " B");
}

std::string BucketLimitsText(const BucketLimits& limits) {
  return absl::StrCat(limits.bucket_bytes, " ", limits.first_bucket_bytes, "\n");
}

absl::StatusOr<BucketLimits> ParseBucketLimits(absl::string_view text) {
  std::vector<absl::string_view> words =
      absl::StrSplit(absl::StripSuffix(text, "\n"), ' ', absl::SkipEmpty());
  BucketLimits limits;
  if (words.size() != 2 || !absl::SimpleAtoi(words[0], &limits.bucket_bytes) ||
      !absl::SimpleAtoi(words[1], &limits.first_bucket_bytes) || limits.bucket_bytes == 0 ||
      limits.first_bucket_bytes == 0 || limits.first_bucket_bytes > limits.bucket_bytes) {
    return absl::DataLossError(
        "checkpoint file 'bucket_limits' is not two sizes in bytes (a bucket, and a first bucket "
        "no larger)");
  }
  return limits;
}

}  // namespace cohort
