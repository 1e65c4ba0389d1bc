#include "runtime/slurm/slurm_job.h"

#include <algorithm>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cohort {
namespace {

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), absl::ascii_isdigit);
}

// The GPU count of a GRES list such as "gpu:8", "gpu:a100:4(S:0-1)" or "gpu:2,shard:8"; 0 when it
// names no GPU.
uint32_t GpusOf(absl::string_view gres) {
  uint32_t gpus = 0;
  for (absl::string_view item : absl::StrSplit(gres, ',')) {
    item = item.substr(0, item.find('('));
    if (!absl::StartsWith(item, "gpu")) continue;
    const size_t colon = item.rfind(':');
    uint32_t count = 0;
    if (colon != absl::string_view::npos && absl::SimpleAtoi(item.substr(colon + 1), &count)) {
      gpus += count;
    }
  }
  return gpus;
}

}  // namespace

absl::StatusOr<uint32_t> SlurmNodesFor(uint32_t slots, uint32_t slots_per_node) {
  if (slots == 0) return absl::InvalidArgumentError("a task needs at least 1 slot");
  if (slots_per_node == 0) return absl::InvalidArgumentError("the nodes offer no slots");
  if (slots <= slots_per_node) return 1u;
  if (slots % slots_per_node != 0) {
    const uint32_t below = slots / slots_per_node * slots_per_node;
    return absl::InvalidArgumentError(absl::StrCat(
        "needs ", slots, " slots; Slurm nodes have ", slots_per_node, " slots each and ", slots,
        " is not a multiple of ", slots_per_node, ": use ", below, " or ", below + slots_per_node));
  }
  return slots / slots_per_node;
}

std::vector<std::string> SbatchArgv(const SlurmSettings& settings, const ProvisionRequest& request,
                                    uint32_t nodes) {
  const uint32_t per_node = request.slots / nodes;
  std::vector<std::string> argv = {
      "sbatch",
      "--parsable",
      absl::StrCat("--job-name=cohort-task-", request.task_id),
      absl::StrCat("--nodes=", nodes),
      "--ntasks-per-node=1",
      absl::StrCat("--output=", settings.log_dir, "/%j.out"),
  };
  if (settings.gpus) {
    // Whole nodes: an agent offers every GPU its node's driver lists (gpu_slots.h), so no other
    // job may hold one of them.
    argv.push_back(absl::StrCat("--gpus-per-node=", per_node));
    argv.push_back("--exclusive");
  } else {
    argv.push_back(absl::StrCat("--cpus-per-task=", per_node));
  }
  const std::string& partition = request.partition.empty() ? settings.partition : request.partition;
  if (!partition.empty()) argv.push_back("--partition=" + partition);
  if (!settings.account.empty()) argv.push_back("--account=" + settings.account);
  argv.insert(argv.end(), settings.sbatch_options.begin(), settings.sbatch_options.end());
  argv.insert(argv.end(), request.options.begin(), request.options.end());
  return argv;
}

std::string SlurmBatchScript(const SlurmSettings& settings, const ProvisionRequest& request,
                             uint32_t nodes) {
  const uint32_t per_node = request.slots / nodes;
  // The agent's arguments after its id, which needs the step's variables and so a shell there.
  std::vector<std::string> agent = {
      "--orchestrator",
      settings.orchestrator_endpoint,
      "--slots",
      settings.gpus ? std::string("auto") : absl::StrCat(per_node),
  };
  if (!settings.agent_key_file.empty()) {
    agent.insert(agent.end(), {"--key", settings.agent_key_file, "--orchestrator-key",
                               settings.orchestrator_public_key});
  }
  std::string quoted;
  for (const std::string& arg : agent) absl::StrAppend(&quoted, " ", ShellQuote(arg));
  return absl::StrCat(
      "#!/bin/sh\n", "# The Cohort agents of task ", request.task_id, " (trial ", request.trial_id,
      ", experiment ", request.experiment_id, "): one per node, ", per_node,
      settings.gpus ? " GPU" : " CPU", " slot", per_node == 1 ? "" : "s", " each.\n",
      "exec srun --ntasks-per-node=1 --kill-on-bad-exit=1 sh -c 'exec \"$0\" agent --id \"",
      kSlurmAgentKeyName, "-$SLURM_JOB_ID-$SLURM_NODEID\" --advertise-address \"$(hostname)\" ",
      "\"$@\"' ", ShellQuote(settings.cohort_executable), quoted, "\n");
}

absl::StatusOr<std::string> ParseSbatchJobId(absl::string_view output) {
  absl::string_view line = absl::StripAsciiWhitespace(output);
  line = line.substr(0, line.find(';'));
  if (!AllDigits(line)) {
    return absl::InvalidArgumentError(
        absl::StrCat("sbatch printed no job id: '", absl::StripAsciiWhitespace(output), "'"));
  }
  return std::string(line);
}

std::map<std::string, JobState> ParseSqueueStates(absl::string_view output,
                                                  const std::vector<std::string>& job_ids) {
  std::map<std::string, JobState> listed;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    const std::vector<absl::string_view> fields = absl::StrSplit(line, '|');
    if (fields.size() < 3) continue;
    const std::string id(absl::StripAsciiWhitespace(fields[0]));
    const absl::string_view state = absl::StripAsciiWhitespace(fields[1]);
    const absl::string_view reason = absl::StripAsciiWhitespace(fields[2]);
    JobState parsed;
    if (state == "RUNNING") {
      parsed.phase = JobState::Phase::kRunning;
    } else if (state == "PENDING") {
      parsed.phase = JobState::Phase::kPending;
      if (reason != "None") parsed.detail = std::string(reason);
    } else if (state == "CONFIGURING" || state == "SUSPENDED" || state == "REQUEUED" ||
               state == "REQUEUE_HOLD" || state == "REQUEUE_FED" || state == "RESIZING" ||
               state == "SIGNALING" || state == "STAGE_OUT" || state == "RESV_DEL_HOLD") {
      parsed.phase = JobState::Phase::kPending;
      parsed.detail = absl::AsciiStrToLower(state);
    } else {
      parsed.phase = JobState::Phase::kEnded;
      parsed.detail = std::string(state);
    }
    listed[id] = parsed;
  }
  std::map<std::string, JobState> states;
  for (const std::string& id : job_ids) {
    auto found = listed.find(id);
    states[id] = found != listed.end() ? found->second : JobState{JobState::Phase::kEnded, "gone"};
  }
  return states;
}

absl::StatusOr<uint32_t> ParseSinfoSlotsPerNode(absl::string_view output, bool gpus) {
  uint32_t smallest = std::numeric_limits<uint32_t>::max();
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    const std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits('|', 1));
    if (fields.size() < 2) continue;
    uint32_t slots = 0;
    if (gpus) {
      slots = GpusOf(absl::StripAsciiWhitespace(fields[1]));
    } else if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[0]), &slots)) {
      continue;
    }
    if (slots > 0) smallest = std::min(smallest, slots);
  }
  if (smallest == std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("sinfo lists no node with ",
                                                   gpus ? "GPUs (gres gpu:N)" : "CPUs", ": '",
                                                   absl::StripAsciiWhitespace(output), "'"));
  }
  return smallest;
}

std::optional<std::string> SlurmJobOfAgent(absl::string_view agent_id) {
  if (!absl::ConsumePrefix(&agent_id, kSlurmAgentKeyName) || !absl::ConsumePrefix(&agent_id, "-")) {
    return std::nullopt;
  }
  const size_t dash = agent_id.rfind('-');
  if (dash == absl::string_view::npos) return std::nullopt;
  const absl::string_view job = agent_id.substr(0, dash);
  if (!AllDigits(job) || !AllDigits(agent_id.substr(dash + 1))) return std::nullopt;
  return std::string(job);
}

std::string ShellQuote(absl::string_view word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return absl::ascii_isalnum(c) || absl::StrContains("@%+=:,./_-", c);
  });
  if (safe) return std::string(word);
  return absl::StrCat("'", absl::StrJoin(absl::StrSplit(word, '\''), "'\\''"), "'");
}

}  // namespace cohort
