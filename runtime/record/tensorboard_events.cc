#include "runtime/record/tensorboard_events.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "runtime/record/run_folder.h"
#include "runtime/record/tfrecord.h"

namespace cohort {
namespace {

// Protobuf wire format: what these messages need of it.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void AppendKey(std::string& out, uint32_t field, WireType type) {
  AppendVarint(out, (uint64_t{field} << 3) | type);
}

void AppendDouble(std::string& out, uint32_t field, double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  AppendKey(out, field, kFixed64);
  AppendLittleEndian(out, bits, 8);
}

void AppendFloat(std::string& out, uint32_t field, float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  AppendKey(out, field, kFixed32);
  AppendLittleEndian(out, bits, 4);
}

void AppendBytes(std::string& out, uint32_t field, absl::string_view bytes) {
  AppendKey(out, field, kLengthDelimited);
  AppendVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

// tensorflow.Event fields.
constexpr uint32_t kWallTime = 1;
constexpr uint32_t kStep = 2;
constexpr uint32_t kFileVersion = 3;
constexpr uint32_t kSummary = 5;
// tensorflow.Summary and Summary.Value fields.
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kTag = 1;
constexpr uint32_t kSimpleValue = 2;

void AppendScalar(std::string& summary, absl::string_view tag, double value) {
  std::string scalar;
  AppendBytes(scalar, kTag, tag);
  AppendFloat(scalar, kSimpleValue, static_cast<float>(value));
  AppendBytes(summary, kSummaryValue, scalar);
}

}  // namespace

std::string TensorBoardFileStart(double wall_time) {
  std::string event;
  AppendDouble(event, kWallTime, wall_time);
  AppendBytes(event, kFileVersion, "brain.Event:2");
  return TfRecord(event);
}

std::string TensorBoardReport(const MetricsReport& report) {
  const bool training = report.kind == ReportKind::kTraining;
  std::string summary;
  for (const NamedValue& metric : report.metrics) {
    AppendScalar(summary, absl::StrCat(training ? "training/" : "validation/", metric.name),
                 metric.value);
  }
  if (training) {
    for (const NamedValue& timing : report.timings) {
      AppendScalar(summary, absl::StrCat("timings/", timing.name), timing.value);
    }
    if (report.records_per_second > 0) {
      AppendScalar(summary, "throughput/records_per_second", report.records_per_second);
    }
    if (report.exchanged_bytes > 0) {
      AppendScalar(summary, "throughput/exchanged_bytes",
                   static_cast<double>(report.exchanged_bytes));
    }
    for (const GpuReading& gpu : report.gpus) {
      AppendScalar(summary, absl::StrCat("gpu/rank", gpu.rank, "/utilization"), gpu.utilization);
      AppendScalar(summary, absl::StrCat("gpu/rank", gpu.rank, "/memory_used_gib"),
                   static_cast<double>(gpu.memory_used) / (uint64_t{1} << 30));
    }
  }
  std::string event;
  AppendDouble(event, kWallTime, report.unix_time);
  AppendKey(event, kStep, kVarint);
  AppendVarint(event, report.batches);
  AppendBytes(event, kSummary, summary);
  return TfRecord(event);
}

absl::Status AppendTensorBoardReport(const std::string& path, const MetricsReport& report) {
  std::error_code ignored;
  const bool start =
      !std::filesystem::exists(path) || std::filesystem::file_size(path, ignored) == 0;
  std::FILE* file = std::fopen(path.c_str(), "ab");
  if (file == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot open the TensorBoard file ", path, ": ", std::strerror(errno)));
  }
  std::string bytes = start ? TensorBoardFileStart(report.unix_time) : "";
  bytes += TensorBoardReport(report);
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    return absl::InternalError(absl::StrCat("cannot write the TensorBoard file ", path));
  }
  return absl::OkStatus();
}

absl::Status WriteTensorBoardReports(const std::string& path,
                                     const std::vector<MetricsReport>& reports) {
  std::string bytes = TensorBoardFileStart(reports.empty() ? static_cast<double>(std::time(nullptr))
                                                           : reports.front().unix_time);
  for (const MetricsReport& report : reports) bytes += TensorBoardReport(report);
  return WriteFileAtomically(path, bytes);
}

}  // namespace cohort
