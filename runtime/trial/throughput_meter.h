// ThroughputMeter: the training thread's records per second, measured two ways. The report rate
// covers the window since the previous training report (metrics.jsonl's records_per_second); the
// progress rate is measured again once its window has lasted longer than kProgressWindowSeconds,
// so a progress line a few times a second shows a steady figure. Time spent validating is left
// out of both (Exclude): it trains no record, and its own seconds are the report's `validation`
// timing. It also counts the bytes the exchange moved between reports.
//
//   ThroughputMeter meter;
//   meter.Start(clock.MonotonicSeconds(), progress.records_trained);
//   ... train ...
//   meter.Exclude(validation_seconds);
//   report.records_per_second = meter.TakeReportRate(now, progress.records_trained);
//   progress_report.records_per_second = meter.ProgressRate(now, progress.records_trained);
//
// Thread-safety: not thread-safe; the training thread.
#ifndef COHORT_RUNTIME_TRIAL_THROUGHPUT_METER_H_
#define COHORT_RUNTIME_TRIAL_THROUGHPUT_METER_H_

#include <cstdint>

namespace cohort {

class ThroughputMeter {
 public:
  static constexpr double kProgressWindowSeconds = 0.5;

  // Both windows start at `now`, with `records` trained before it (a resumed trial's).
  void Start(double now, uint64_t records);

  // Records per second since Start or the previous call (0 when no time passed); the next window
  // starts at `now`.
  double TakeReportRate(double now, uint64_t records);

  // The progress rate: measured again, and its window started anew, when the window is longer
  // than kProgressWindowSeconds at `now`; else the last figure (0 before the first).
  double ProgressRate(double now, uint64_t records);

  // Leaves `seconds` that trained nothing (a validation just ended) out of both windows.
  void Exclude(double seconds);

  // Bytes the exchange moved since the previous call, given its running total `total_bytes`.
  uint64_t TakeExchangedBytes(uint64_t total_bytes);

 private:
  double report_start_ = 0;
  uint64_t report_start_records_ = 0;
  double progress_start_ = 0;
  uint64_t progress_start_records_ = 0;
  double progress_rate_ = 0;
  uint64_t reported_bytes_ = 0;
};

}  // namespace cohort

#endif  // COHORT_RUNTIME_TRIAL_THROUGHPUT_METER_H_
