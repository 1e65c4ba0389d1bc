#include "runtime/trial/throughput_meter.h"

namespace cohort {

void ThroughputMeter::Start(double now, uint64_t records) {
  report_start_ = progress_start_ = now;
  report_start_records_ = progress_start_records_ = records;
}

double ThroughputMeter::TakeReportRate(double now, uint64_t records) {
  double rate = 0;
  if (now > report_start_) {
    rate = static_cast<double>(records - report_start_records_) / (now - report_start_);
  }
  report_start_ = now;
  report_start_records_ = records;
  return rate;
}

double ThroughputMeter::ProgressRate(double now, uint64_t records) {
  const double elapsed = now - progress_start_;
  if (elapsed > kProgressWindowSeconds) {
    progress_rate_ = static_cast<double>(records - progress_start_records_) / elapsed;
    progress_start_ = now;
    progress_start_records_ = records;
  }
  return progress_rate_;
}

void ThroughputMeter::Exclude(double seconds) {
  if (seconds <= 0) return;
  report_start_ += seconds;
  progress_start_ += seconds;
}

uint64_t ThroughputMeter::TakeExchangedBytes(uint64_t total_bytes) {
  const uint64_t bytes = total_bytes - reported_bytes_;
  reported_bytes_ = total_bytes;
  return bytes;
}

}  // namespace cohort
