// What the versioned envelope codecs (control.fbs between the orchestrator and its agents,
// client.fbs between the CLI and the orchestrator) share: writing fields, and the checks on a
// received envelope before and while reading it (the size, the alignment, the sender's version,
// the FlatBuffers Verifier, then the rules the Verifier leaves to the reader: known enum values
// and aligned 8-byte vectors).
//
// Both envelopes keep `protocol_major` and `protocol_minor` (ushort) as their first two fields in
// every major version: that is what lets one probe read the sender's version from either before
// the buffer is verified as the envelope of this build's major version. A codec states it with
// KeepsVersionFieldsFirst:
//
//   static_assert(KeepsVersionFieldsFirst<wire::ControlEnvelope>());
//   constexpr EnvelopeProtocol kControl{"control", wire::ControlEnvelopeIdentifier,
//                                       wire::VerifyControlEnvelopeBuffer, {1, 0}};
//   std::vector<uint64_t> storage;
//   absl::StatusOr<VerifiedEnvelope> verified = VerifyEnvelope(kControl, bytes, storage);
//   if (!verified.ok()) return verified.status();
//   const auto* envelope = wire::GetControlEnvelope(verified->buffer);
//   EnvelopeTableReader reader(kControl, "TaskList");
//   std::vector<uint64_t> ids = ReadScalars(reader, table.ids());  // reader.status() says why not
//
// Every failure is INVALID_ARGUMENT, worded "malformed <name> message: <what>" except the refusal
// of another major version, which names both versions.
//
// Thread-safety: free functions without shared state; an EnvelopeTableReader belongs to one thread.
#ifndef COHORT_RUNTIME_CONTROL_ENVELOPE_CODEC_H_
#define COHORT_RUNTIME_CONTROL_ENVELOPE_CODEC_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flatbuffers/flatbuffers.h"

namespace cohort {

// ---- writing

// `value` of a C++ enum that lists the generated enum `Wire`'s values in the same order.
template <typename Wire, typename Cpp>
Wire ToWire(Cpp value) {
  return static_cast<Wire>(value);
}

// A string field holding `text` (any bytes, NULs included).
inline flatbuffers::Offset<flatbuffers::String> CreateText(flatbuffers::FlatBufferBuilder& builder,
                                                           const std::string& text) {
  return builder.CreateString(text.data(), text.size());
}

// A vector of the tables `encode(item)` appends to `builder`, one per item, in order.
template <typename Item, typename EncodeItem>
auto CreateTables(flatbuffers::FlatBufferBuilder& builder, const std::vector<Item>& items,
                  EncodeItem encode) {
  std::vector<decltype(encode(std::declval<const Item&>()))> tables;
  tables.reserve(items.size());
  for (const Item& item : items) tables.push_back(encode(item));
  return builder.CreateVector(tables);
}

// ---- reading

// The vtable offsets of an envelope's first two fields, protocol_major and protocol_minor.
inline constexpr flatbuffers::voffset_t kEnvelopeMajorField = 4;
inline constexpr flatbuffers::voffset_t kEnvelopeMinorField = 6;

// Whether the generated `Envelope` keeps the version fields where VerifyEnvelope's probe reads
// them.
template <typename Envelope>
constexpr bool KeepsVersionFieldsFirst() {
  return Envelope::VT_PROTOCOL_MAJOR == kEnvelopeMajorField &&
         Envelope::VT_PROTOCOL_MINOR == kEnvelopeMinorField;
}

struct ProtocolVersion {
  uint16_t major = 0;
  uint16_t minor = 0;
};

// One protocol's envelope, as its generated code and this build know it.
struct EnvelopeProtocol {
  absl::string_view name;                           // "control": names it in error texts
  const char* (*file_identifier)();                 // the generated <Envelope>Identifier
  bool (*verify_envelope)(flatbuffers::Verifier&);  // the generated Verify<Envelope>Buffer
  ProtocolVersion version;                          // the version this build writes
};

// A received buffer that passed VerifyEnvelope.
struct VerifiedEnvelope {
  const uint8_t* buffer;   // the verified bytes: the codec's Get<Envelope> reads the root here
  ProtocolVersion sender;  // the version the sender wrote
};

// "1.0".
std::string VersionText(ProtocolVersion version);

// INVALID_ARGUMENT "malformed <protocol.name> message: <what>".
absl::Status MalformedMessage(const EnvelopeProtocol& protocol, absl::string_view what);

// Verifies `bytes` as an envelope of `protocol`: not too large for the Verifier, carrying the
// file identifier, of this build's major version (any minor), passing the Verifier. The result
// points into `bytes`, or into `storage` when `bytes` is not 8-byte aligned (it is copied there
// first), so it is valid while both live unchanged. Whether the envelope holds a message is left
// to the codec, which knows the union's name.
absl::StatusOr<VerifiedEnvelope> VerifyEnvelope(const EnvelopeProtocol& protocol,
                                                absl::string_view bytes,
                                                std::vector<uint64_t>& storage);

// `failure` to read an envelope from `sender`, with both versions added when the sender speaks a
// newer minor version than this build (whose additions may explain it); otherwise `failure`.
absl::Status NoteNewerSender(const EnvelopeProtocol& protocol, ProtocolVersion sender,
                             const absl::Status& failure);

// Converts one message's verified tables to structs, keeping the first rule they break as
// "malformed <protocol> message: <message name>: <why>".
class EnvelopeTableReader {
 public:
  // `protocol` and the text behind `message_name` must outlive the reader.
  EnvelopeTableReader(const EnvelopeProtocol& protocol, absl::string_view message_name)
      : protocol_(protocol), message_name_(message_name) {}

  // OK, or the first rule broken.
  const absl::Status& status() const { return status_; }

  // Records `why` unless a rule was broken already.
  void Fail(absl::string_view why);

  // A value of the generated enum `Wire` this build knows, as `Cpp` (whose values are the wire
  // values); otherwise Cpp{} and a failure naming `enum_name`.
  template <typename Cpp, typename Wire>
  Cpp Enum(Wire value, absl::string_view enum_name) {
    const auto number = static_cast<int>(value);
    if (number > static_cast<int>(Wire::MAX)) {
      Fail(absl::StrCat("unknown ", enum_name, " ", number));
      return Cpp{};
    }
    return static_cast<Cpp>(number);
  }

 private:
  const EnvelopeProtocol& protocol_;
  absl::string_view message_name_;
  absl::Status status_;
};

// The contents of a verified string field; empty when absent.
inline std::string TextOf(const flatbuffers::String* field) {
  return field ? field->str() : std::string();
}

// The values of a verified scalar vector; empty when absent. The Verifier checks a vector's
// alignment for its 4-byte length only, so values of 8 bytes that are not 8-byte aligned are
// refused here (a failure of `reader`, and an empty result) rather than read. An empty vector has
// nothing to read and is accepted wherever it lies: FlatBuffers' builder does not align it.
template <typename T>
std::vector<T> ReadScalars(EnvelopeTableReader& reader, const flatbuffers::Vector<T>* list) {
  if (list == nullptr || list->size() == 0) return {};
  if (reinterpret_cast<uintptr_t>(list->data()) % alignof(T) != 0) {
    reader.Fail(absl::StrCat("a vector of ", sizeof(T), "-byte values is not ", alignof(T),
                             "-byte aligned"));
    return {};
  }
  return std::vector<T>(list->begin(), list->end());
}

// What `read(table)` makes of each table of a verified vector, in order; empty when absent.
template <typename Table, typename ReadTable>
auto ReadTables(const flatbuffers::Vector<flatbuffers::Offset<Table>>* list, ReadTable read) {
  std::vector<decltype(read(std::declval<const Table&>()))> items;
  if (list == nullptr) return items;
  items.reserve(list->size());
  for (const Table* table : *list) items.push_back(read(*table));
  return items;
}

}  // namespace cohort

#endif  // COHORT_RUNTIME_CONTROL_ENVELOPE_CODEC_H_
