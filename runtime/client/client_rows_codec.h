// The tables several client messages share (schemas/client.fbs): the rows of the listings, a
// trial's summary and its validations, a named value, a GPU reading, a list of texts. Each struct
// has its Encode (struct -> table, appended to a builder) and its Read (table -> struct, a bad
// enum value reported through the reader); EncodeAll and ReadAll do a vector of them. The client
// codec's own part (client_messages.cc) builds the messages and envelopes from these.
//
// Thread-safety: plain functions; a builder or reader is the caller's.
#ifndef COHORT_RUNTIME_CLIENT_CLIENT_ROWS_CODEC_H_
#define COHORT_RUNTIME_CLIENT_CLIENT_ROWS_CODEC_H_

#include <string>
#include <vector>

#include "client_generated.h"
#include "runtime/client/client_messages.h"
#include "runtime/control/envelope_codec.h"

namespace cohort::client_wire {

namespace wire = fbs::client;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using Reader = EnvelopeTableReader;

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> Texts(
    FlatBufferBuilder& builder, const std::vector<std::string>& texts);
// Empty for an absent list.
std::vector<std::string> Texts(const flatbuffers::Vector<Offset<flatbuffers::String>>* list);

Offset<wire::NamedValue> Encode(FlatBufferBuilder& builder, const NamedValue& value);
Offset<wire::GpuReading> Encode(FlatBufferBuilder& builder, const GpuReading& gpu);
Offset<wire::RankPace> Encode(FlatBufferBuilder& builder, const RankPace& pace);
Offset<wire::ExperimentSummary> Encode(FlatBufferBuilder& builder, const ExperimentSummary& s);
Offset<wire::CheckpointRow> Encode(FlatBufferBuilder& builder, const CheckpointRow& row);
Offset<wire::TaskRow> Encode(FlatBufferBuilder& builder, const TaskRow& row);
Offset<wire::AgentRow> Encode(FlatBufferBuilder& builder, const AgentRow& row);
Offset<wire::TrialLogLine> Encode(FlatBufferBuilder& builder, const TrialLogLine& line);
Offset<wire::TrialSummary> Encode(FlatBufferBuilder& builder, const TrialSummary& t);
Offset<wire::ValidationRow> Encode(FlatBufferBuilder& builder, const ValidationRow& row);

NamedValue Read(Reader& reader, const wire::NamedValue& t);
GpuReading Read(Reader& reader, const wire::GpuReading& t);
RankPace Read(Reader& reader, const wire::RankPace& t);
ExperimentSummary Read(Reader& reader, const wire::ExperimentSummary& t);
CheckpointRow Read(Reader& reader, const wire::CheckpointRow& t);
TaskRow Read(Reader& reader, const wire::TaskRow& t);
AgentRow Read(Reader& reader, const wire::AgentRow& t);
TrialLogLine Read(Reader& reader, const wire::TrialLogLine& t);
TrialSummary Read(Reader& reader, const wire::TrialSummary& t);
ValidationRow Read(Reader& reader, const wire::ValidationRow& t);

// A vector of the items' tables.
template <typename Item>
auto EncodeAll(FlatBufferBuilder& builder, const std::vector<Item>& items) {
  return CreateTables(builder, items,
                      [&builder](const Item& item) { return Encode(builder, item); });
}

// The structs of a vector of tables (empty for an absent one).
template <typename T>
auto ReadAll(Reader& reader, const flatbuffers::Vector<Offset<T>>* list) {
  return ReadTables(list, [&reader](const T& table) { return Read(reader, table); });
}

}  // namespace cohort::client_wire

#endif  // COHORT_RUNTIME_CLIENT_CLIENT_ROWS_CODEC_H_
