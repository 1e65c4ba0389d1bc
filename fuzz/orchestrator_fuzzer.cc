// Fuzz target: the orchestrator's message handlers. Each input is a message script
// (message_script.h) played against a fresh Orchestrator that already holds one submitted
// experiment (one trial on 2 slots): agent messages and client requests are decoded exactly as
// the orchestrator's server decodes them and, when they decode, handed to OnAgentMessage and
// OnClientRequest; ticks move a manual clock.
// Contract checked: no crash, leak or undefined behaviour whatever agents and clients send, in
// whatever order; every client request is answered with a reply, never with a request.
//
// A SubmitExperiment in the script is not handed on: its YAML names storage paths the
// orchestrator would create and prune, and the config loader has its own target (config_fuzzer).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/message_script.h"
#include "runtime/client/client_messages.h"
#include "runtime/control/control_messages.h"
#include "runtime/orchestrator/orchestrator.h"
#include "test/common/manual_clock.h"

namespace cohort::fuzz {
namespace {

// The experiment every input starts from: one trial of 2 slots, checkpoints under the state dir.
constexpr char kExperimentYaml[] = R"(name: fuzzed
entrypoint: /opt/plugins/libmlp.so
hyperparameters:
  global_batch_size: 32
  learning_rate: 0.01
resources:
  slots_per_trial: 2
searcher:
  name: single
  metric: validation_loss
  max_length:
    batches: 40
min_checkpoint_period:
  batches: 10
max_restarts: 2
reproducibility:
  experiment_seed: 7
)";

class DiscardingOutbox : public AgentOutbox {
 public:
  uint64_t Send(const std::string&, const ControlMessage&, uint64_t) override {
    return ++last_message_id_;
  }

 private:
  uint64_t last_message_id_ = 0;
};

// The orchestrator's state folder: emptied before every input, removed when the process exits.
class ScratchFolder {
 public:
  ScratchFolder()
      : path_(std::filesystem::temp_directory_path() /
              absl::StrCat("cohort-orchestrator-fuzz-", getpid())) {}
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

const std::filesystem::path& StateDir() {
  static const ScratchFolder folder;
  return folder.path();
}

void Play(const std::vector<ScriptStep>& steps) {
  std::filesystem::remove_all(StateDir());
  ManualClock clock;
  DiscardingOutbox outbox;
  OrchestratorOptions options;
  options.state_dir = StateDir().string();
  Orchestrator orchestrator(options, outbox, clock);
  const ClientMessage submitted = orchestrator.OnClientRequest(SubmitExperiment{kExperimentYaml});
  FUZZ_CHECK(std::holds_alternative<ExperimentSubmitted>(submitted), ClientMessageName(submitted));

  for (const ScriptStep& step : steps) {
    switch (step.kind()) {
      case StepKind::kAgentMessage: {
        absl::StatusOr<DecodedControl> message = DecodeControlMessage(step.payload);
        if (message.ok()) {
          orchestrator.OnAgentMessage(absl::StrCat("node-", step.argument() % 2), *message);
        }
        break;
      }
      case StepKind::kClientRequest: {
        absl::StatusOr<DecodedClient> request = DecodeClientMessage(step.payload);
        if (!request.ok() || !IsClientRequest(request->message) ||
            std::holds_alternative<SubmitExperiment>(request->message)) {
          break;
        }
        const ClientMessage reply = orchestrator.OnClientRequest(request->message);
        FUZZ_CHECK(!IsClientRequest(reply), ClientMessageName(reply));
        break;
      }
      case StepKind::kTick:
        clock.Advance(step.argument());
        orchestrator.Tick();
        break;
    }
  }
  orchestrator.Tick();
}

}  // namespace
}  // namespace cohort::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cohort::fuzz::Play(cohort::fuzz::ReadScript(data, size));
  return 0;
}
