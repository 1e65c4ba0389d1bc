// Fuzz target: the client <-> orchestrator protocol's decoder (schemas/client.fbs), as the
// orchestrator's client socket and the CLI run it on every frame they receive.
// Contract checked: any bytes either decode or are refused with INVALID_ARGUMENT, never crash;
// whatever decodes re-encodes to bytes that decode again (same header) and re-encode to the
// same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "runtime/client/client_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<DecodedClient> decoded = DecodeClientMessage(bytes);
  if (!decoded.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(decoded.status()), decoded.status().ToString());
    return 0;
  }
  const std::string encoded = EncodeClientMessage(decoded->header, decoded->message);
  absl::StatusOr<DecodedClient> again = DecodeClientMessage(encoded);
  FUZZ_CHECK(again.ok(), again.status().ToString());
  FUZZ_CHECK(again->header == decoded->header, "the header changed in a round trip");
  FUZZ_CHECK(EncodeClientMessage(again->header, again->message) == encoded,
             ClientMessageName(again->message));
  return 0;
}
