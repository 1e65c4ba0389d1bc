// Fuzz target: the orchestrator <-> agent protocol's decoder (schemas/control.fbs), as the
// agent's connection and the orchestrator's agent socket run it on every frame they receive.
// Contract checked: any bytes either decode or are refused with INVALID_ARGUMENT, never crash;
// whatever decodes re-encodes to bytes that decode again (same header) and re-encode to the
// same bytes, and it can be described for a log line.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "runtime/control/control_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<DecodedControl> decoded = DecodeControlMessage(bytes);
  if (!decoded.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(decoded.status()), decoded.status().ToString());
    return 0;
  }
  FUZZ_CHECK(!DescribeControlMessage(decoded->message).empty(), "an empty description");
  const std::string encoded = EncodeControlMessage(decoded->header, decoded->message);
  absl::StatusOr<DecodedControl> again = DecodeControlMessage(encoded);
  FUZZ_CHECK(again.ok(), again.status().ToString());
  FUZZ_CHECK(again->header == decoded->header, "the header changed in a round trip");
  FUZZ_CHECK(EncodeControlMessage(again->header, again->message) == encoded,
             ControlMessageName(again->message));
  return 0;
}
