// TensorBoard event files: TFRecord framing with masked CRC-32C, and the Event messages read
// back field by field with a protobuf wire decoder written from the format's definition.
#include "runtime/record/tensorboard_events.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/base/file_io.h"
#include "runtime/record/run_folder.h"
#include "runtime/record/tfrecord.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

uint64_t LittleEndian(absl::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

// The records of a TFRecord file, each checked against its length and both CRCs.
std::vector<std::string> ReadRecords(absl::string_view file) {
  std::vector<std::string> records;
  while (!file.empty()) {
    EXPECT_GE(file.size(), 16u);
    if (file.size() < 16) break;
    const uint64_t length = LittleEndian(file.substr(0, 8));
    EXPECT_EQ(LittleEndian(file.substr(8, 4)), MaskedCrc32c(file.substr(0, 8)));
    EXPECT_GE(file.size(), 16 + length);
    if (file.size() < 16 + length) break;
    const absl::string_view data = file.substr(12, length);
    EXPECT_EQ(LittleEndian(file.substr(12 + length, 4)), MaskedCrc32c(data));
    records.emplace_back(data);
    file.remove_prefix(16 + length);
  }
  return records;
}

// One decoded protobuf field: its number, wire type, and value (varint or fixed bits, or bytes).
struct Field {
  uint32_t number = 0;
  uint32_t type = 0;
  uint64_t bits = 0;
  std::string bytes;
};

uint64_t ReadVarint(absl::string_view& in) {
  uint64_t value = 0;
  for (int shift = 0; !in.empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) break;
  }
  return value;
}

std::vector<Field> Decode(absl::string_view in) {
  std::vector<Field> fields;
  while (!in.empty()) {
    const uint64_t key = ReadVarint(in);
    Field field;
    field.number = static_cast<uint32_t>(key >> 3);
    field.type = static_cast<uint32_t>(key & 7);
    if (field.type == 0) {
      field.bits = ReadVarint(in);
    } else if (field.type == 1 || field.type == 5) {
      const size_t size = field.type == 1 ? 8 : 4;
      field.bits = LittleEndian(in.substr(0, size));
      in.remove_prefix(size);
    } else if (field.type == 2) {
      const uint64_t size = ReadVarint(in);
      field.bytes = std::string(in.substr(0, size));
      in.remove_prefix(size);
    } else {
      ADD_FAILURE() << "wire type " << field.type;
      break;
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

double AsDouble(uint64_t bits) {
  double value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

float AsFloat(uint64_t bits) {
  const uint32_t narrow = static_cast<uint32_t>(bits);
  float value = 0;
  std::memcpy(&value, &narrow, sizeof value);
  return value;
}

// An Event: wall time, step, file version, and its summary's scalars (tag -> value).
struct Event {
  double wall_time = 0;
  uint64_t step = 0;
  std::string file_version;
  std::vector<std::pair<std::string, float>> scalars;
};

Event DecodeEvent(absl::string_view bytes) {
  Event event;
  for (const Field& field : Decode(bytes)) {
    if (field.number == 1 && field.type == 1) event.wall_time = AsDouble(field.bits);
    if (field.number == 2 && field.type == 0) event.step = field.bits;
    if (field.number == 3 && field.type == 2) event.file_version = field.bytes;
    if (field.number != 5 || field.type != 2) continue;
    for (const Field& value : Decode(field.bytes)) {
      EXPECT_EQ(value.number, 1u);
      std::string tag;
      float scalar = 0;
      for (const Field& part : Decode(value.bytes)) {
        if (part.number == 1 && part.type == 2) tag = part.bytes;
        if (part.number == 2 && part.type == 5) scalar = AsFloat(part.bits);
      }
      event.scalars.emplace_back(tag, scalar);
    }
  }
  return event;
}

MetricsReport Training(uint64_t batches, double loss) {
  MetricsReport report;
  report.kind = ReportKind::kTraining;
  report.batches = batches;
  report.unix_time = 1700000000.25 + static_cast<double>(batches);
  report.metrics = {{"loss", loss}, {"accuracy", 0.75}};
  report.timings = {{"compute", 1.5}, {"exchange_wait", 0.25}};
  report.records_per_second = 4096;
  return report;
}

MetricsReport Validation(uint64_t batches, double loss) {
  MetricsReport report;
  report.kind = ReportKind::kValidation;
  report.batches = batches;
  report.unix_time = 1700000100.5;
  report.metrics = {{"loss", loss}};
  return report;
}

TEST(TfRecordTest, MasksTheCrcAsTensorFlowDoes) {
  EXPECT_EQ(MaskedCrc32c(""), 0xa282ead8u);  // CRC-32C of nothing is 0
  EXPECT_EQ(MaskedCrc32c("123456789"),
            0xc78ab0e5u);  // 0xE3069283 rotated right 15, plus 0xa282ead8
}

TEST(TfRecordTest, FramesTheDataWithItsLengthAndBothCrcs) {
  const std::string record = TfRecord("event bytes");
  ASSERT_EQ(record.size(), 16u + 11u);
  EXPECT_THAT(ReadRecords(record), ElementsAre("event bytes"));
}

TEST(TensorBoardEventsTest, ATrainingReportIsOneEventOfScalars) {
  const std::vector<std::string> records = ReadRecords(TensorBoardReport(Training(300, 0.5)));
  ASSERT_EQ(records.size(), 1u);
  const Event event = DecodeEvent(records[0]);
  EXPECT_EQ(event.step, 300u);
  EXPECT_DOUBLE_EQ(event.wall_time, 1700000300.25);
  EXPECT_THAT(event.scalars,
              ElementsAre(Pair("training/loss", 0.5f), Pair("training/accuracy", 0.75f),
                          Pair("timings/compute", 1.5f), Pair("timings/exchange_wait", 0.25f),
                          Pair("throughput/records_per_second", 4096.0f)));
}

TEST(TensorBoardEventsTest, GpuReadingsAreScalarsPerRank) {
  MetricsReport report = Training(300, 0.5);
  report.gpus = {{0, 3, "NVIDIA H100", 97.5, uint64_t{3} << 30, uint64_t{80} << 30},
                 {1, 0, "NVIDIA H100", 61, uint64_t{1} << 29, uint64_t{80} << 30}};
  const Event event = DecodeEvent(ReadRecords(TensorBoardReport(report))[0]);
  EXPECT_THAT(event.scalars,
              testing::IsSupersetOf(
                  {Pair("gpu/rank0/utilization", 97.5f), Pair("gpu/rank0/memory_used_gib", 3.0f),
                   Pair("gpu/rank1/utilization", 61.0f), Pair("gpu/rank1/memory_used_gib", 0.5f)}));
}

TEST(TensorBoardEventsTest, AValidationReportHasItsMetricsOnly) {
  const Event event = DecodeEvent(ReadRecords(TensorBoardReport(Validation(250, 0.125)))[0]);
  EXPECT_EQ(event.step, 250u);
  EXPECT_THAT(event.scalars, ElementsAre(Pair("validation/loss", 0.125f)));
}

TEST(TensorBoardEventsTest, AFileStartsWithItsVersionAndGrowsByAppending) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tensorboard_events_test_" + std::to_string(::getpid()) + ".tfevents"))
                               .string();
  std::filesystem::remove(path);
  ASSERT_TRUE(AppendTensorBoardReport(path, Training(100, 2.0)).ok());
  ASSERT_TRUE(AppendTensorBoardReport(path, Validation(100, 1.0)).ok());
  ASSERT_TRUE(AppendTensorBoardReport(path, Training(200, 1.5)).ok());
  absl::StatusOr<std::string> file = ReadWholeFile(path);
  ASSERT_TRUE(file.ok());
  std::vector<std::string> records = ReadRecords(*file);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(DecodeEvent(records[0]).file_version, "brain.Event:2");
  EXPECT_DOUBLE_EQ(DecodeEvent(records[0]).wall_time, 1700000100.25);
  EXPECT_EQ(DecodeEvent(records[3]).step, 200u);

  // A rewind to batch 100 leaves the reports up to it, and the file still starts whole.
  ASSERT_TRUE(WriteTensorBoardReports(path, {Training(100, 2.0), Validation(100, 1.0)}).ok());
  file = ReadWholeFile(path);
  ASSERT_TRUE(file.ok());
  records = ReadRecords(*file);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(DecodeEvent(records[0]).file_version, "brain.Event:2");
  EXPECT_THAT(DecodeEvent(records[2]).scalars, ElementsAre(Pair("validation/loss", 1.0f)));
  std::filesystem::remove(path);
}

TEST(TensorBoardEventsTest, AFileCannotBeWrittenWhereNoFolderIs) {
  EXPECT_FALSE(AppendTensorBoardReport("/nonexistent-folder/events", Training(1, 1)).ok());
}

}  // namespace
}  // namespace cohort
