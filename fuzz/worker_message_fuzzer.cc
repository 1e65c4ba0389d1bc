// Fuzz target: the worker <-> supervisor channel's decoders (schemas/worker.fbs), as the
// supervisor's hub and the worker's link run them on every frame they receive.
// Contract checked: any bytes either decode or are refused with INVALID_ARGUMENT, never crash;
// whatever decodes re-encodes to bytes that decode again and re-encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "runtime/control/worker_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);

  absl::StatusOr<WorkerMessage> message = DecodeWorkerMessage(bytes);
  if (message.ok()) {
    const std::string encoded = EncodeWorkerMessage(*message);
    absl::StatusOr<WorkerMessage> again = DecodeWorkerMessage(encoded);
    FUZZ_CHECK(again.ok(), again.status().ToString());
    FUZZ_CHECK(EncodeWorkerMessage(*again) == encoded, WorkerMessageName(*again));
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(message.status()), message.status().ToString());
  }

  absl::StatusOr<WorkerCommand> command = DecodeWorkerCommand(bytes);
  if (command.ok()) {
    const std::string encoded = EncodeWorkerCommand(*command);
    absl::StatusOr<WorkerCommand> again = DecodeWorkerCommand(encoded);
    FUZZ_CHECK(again.ok(), again.status().ToString());
    FUZZ_CHECK(EncodeWorkerCommand(*again) == encoded, "a command re-encoded differently");
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(command.status()), command.status().ToString());
  }
  FUZZ_CHECK(!(message.ok() && command.ok()), "bytes decoded as both a message and a command");
  return 0;
}
