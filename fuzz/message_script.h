// A message script: the input format of the orchestrator fuzz target. A script is a sequence of
// steps, each a tag byte, a 16-bit little-endian length and that many payload bytes; a step cut
// short by the end of the input is dropped. The tag says what the step is:
//
//   tag % 3 == 0   an agent message (control.fbs bytes) from connection "node-<(tag / 3) % 2>"
//   tag % 3 == 1   a client request (client.fbs bytes)
//   tag % 3 == 2   the clock moves (tag / 3) seconds, then the orchestrator ticks
//
// Pure functions: safe to call from any thread.
#ifndef COHORT_FUZZ_MESSAGE_SCRIPT_H_
#define COHORT_FUZZ_MESSAGE_SCRIPT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cohort::fuzz {

enum class StepKind { kAgentMessage, kClientRequest, kTick };

struct ScriptStep {
  uint8_t tag = 0;
  std::string payload;

  StepKind kind() const { return static_cast<StepKind>(tag % 3); }
  // The agent connection's index (agent messages) or the seconds the clock moves (ticks).
  uint32_t argument() const { return tag / 3u; }
};

inline ScriptStep AgentStep(uint32_t agent_index, std::string bytes) {
  return {static_cast<uint8_t>(3 * (agent_index % 2)), std::move(bytes)};
}
inline ScriptStep ClientStep(std::string bytes) { return {1, std::move(bytes)}; }
inline ScriptStep TickStep(uint32_t seconds) {
  return {static_cast<uint8_t>(2 + 3 * (seconds % 85)), ""};
}

inline std::vector<ScriptStep> ReadScript(absl::string_view bytes) {
  std::vector<ScriptStep> steps;
  size_t at = 0;
  while (bytes.size() - at >= 3) {
    const uint8_t tag = static_cast<uint8_t>(bytes[at]);
    const size_t length = static_cast<uint8_t>(bytes[at + 1]) |
                          (static_cast<size_t>(static_cast<uint8_t>(bytes[at + 2])) << 8);
    at += 3;
    if (bytes.size() - at < length) break;
    steps.push_back({tag, std::string(bytes.substr(at, length))});
    at += length;
  }
  return steps;
}

// The script of a fuzz target's input bytes.
inline std::vector<ScriptStep> ReadScript(const uint8_t* data, size_t size) {
  return ReadScript(absl::string_view(reinterpret_cast<const char*>(data), size));
}

// Payloads longer than 65535 bytes are cut to that length.
inline std::string WriteScript(const std::vector<ScriptStep>& steps) {
  std::string bytes;
  for (const ScriptStep& step : steps) {
    const size_t length = std::min<size_t>(step.payload.size(), 0xffff);
    bytes.push_back(static_cast<char>(step.tag));
    bytes.push_back(static_cast<char>(length & 0xff));
    bytes.push_back(static_cast<char>(length >> 8));
    bytes.append(step.payload, 0, length);
  }
  return bytes;
}

}  // namespace cohort::fuzz

#endif  // COHORT_FUZZ_MESSAGE_SCRIPT_H_
