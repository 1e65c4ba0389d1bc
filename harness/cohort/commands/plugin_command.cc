#include "harness/cohort/commands/plugin_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/cohort/commands/command_exit.h"
#include "harness/cohort/process/child_process.h"
#include "harness/cohort/process/entrypoint.h"
#include "harness/cohort/process/plugin_load_probe.h"
#include "runtime/arena/default_memory_provider.h"
#include "runtime/arena/dtype.h"
#include "runtime/config/hyperparameter_assignment.h"
#include "runtime/conformance/gradient_check.h"
#include "runtime/plugin/loaded_model.h"
#include "runtime/plugin/plugin_library.h"

namespace cohort {
namespace {

constexpr char kPluginUsage[] =
    "usage: cohort plugin info PLUGIN    (a .so path, or a name as an entrypoint gives it)\n"
    "       cohort plugin check PLUGIN [--hparam NAME=VALUE]... [--batch-size N] [--seed N]\n"
    "                          [--step H] [--tolerance R] [--abs-tolerance A] [--coordinates N]\n"
    "                          [--timeout SECONDS]\n"
    "\n"
    "info   loads the plugin and prints its ABI version and functions.\n"
    "check  also creates a model and runs the conformance checks: one train and one evaluate\n"
    "       batch, gradients against finite differences, evaluate leaving parameters alone,\n"
    "       and a save/load round trip of the plugin's state. The plugin runs in a child\n"
    "       process, so a crash is reported instead of taking the command down, and one\n"
    "       that is still running after --timeout seconds (default 600; 0: no limit) is\n"
    "       killed and reported.\n"
    "       The gradient check moves each probed parameter by --step (default 1e-3) and allows\n"
    "       --tolerance times the gradient (default 0.02), plus --abs-tolerance (default 1e-4),\n"
    "       plus what the loss's own rounding in the tensor's dtype makes of the difference\n"
    "       (8 units in its last place, over the step); it probes --coordinates per tensor\n"
    "       (default 6).\n"
    "       --hparam values are typed as the experiment config types them (`3` an int, `yes`\n"
    "       a bool, `nan` and '3' strings, [64, 32] a list), so the check sees the types its\n"
    "       trials get.\n";

struct CheckOptions {
  std::string path;
  Hyperparameters hyperparameters;
  uint64_t batch_size = 16;
  uint64_t seed = 1;
  GradientCheckOptions gradients;
  double timeout_seconds = 600;  // 0: none
};

// `text` as a finite number above 0 (or at least 0 with `zero_allowed`) into `out`, or an error
// naming `flag`.
absl::Status ParsePositive(const std::string& flag, const std::string& text, bool zero_allowed,
                           double& out) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) || value < 0 ||
      (value == 0 && !zero_allowed)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " takes a number ", zero_allowed ? "of 0 or more" : "above 0", ", not '", text, "'"));
  }
  out = value;
  return absl::OkStatus();
}

void PrintInfo(const PluginLibrary& plugin) {
  const cohort_plugin_api& api = plugin.api();
  std::printf("plugin %s from %s\n", plugin.name().c_str(), plugin.path().c_str());
  std::printf("  built for ABI %s, runs on hosts of ABI %u.%u or later (this host: %d.%d)\n",
              VersionString(plugin.abi_version()).c_str(), api.abi_version.major,
              api.host_minor_required, COHORT_ABI_VERSION_MAJOR, COHORT_ABI_VERSION_MINOR);
  std::printf("  optimizer_step: %s; save_state/load_state: %s\n",
              plugin.has_optimizer() ? "provided" : "not provided (the host's optimizer runs)",
              plugin.has_state() ? "provided" : "not provided");
}

std::string FormatMetrics(const BatchMetrics& metrics) {
  std::string out;
  for (const Metric& m : metrics.metrics)
    absl::StrAppend(&out, " ", m.name, "=", absl::StrFormat("%.6g", m.value));
  return out;
}

// Hashes every block's values, or its gradients (on the CPU): changes when any of them changes.
uint64_t ArenaChecksum(const TensorArena& arena, bool gradients = false) {
  uint64_t sum = 0;
  for (const ArenaBlock& b : arena.blocks()) {
    const void* data = gradients ? b.grad : b.data;
    if (b.device.kind != COHORT_DEVICE_CPU || data == nullptr) continue;
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (uint64_t i = 0; i < b.element_count * b.element_size; ++i)
      sum = sum * 1099511628211ULL + bytes[i];
  }
  return sum;
}

BatchSpec FirstBatch(cohort_split split, uint64_t size, uint64_t records) {
  BatchSpec batch;
  batch.split = split;
  for (uint64_t i = 0; i < size && i < records; ++i) batch.record_indices.push_back(i);
  return batch;
}

// Runs in the child process. Prints each check; returns the exit code.
int RunChecks(const CheckOptions& options) {
  absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin = PluginLibrary::Open(options.path);
  if (!plugin.ok()) return CommandError(plugin.status());
  PrintInfo(**plugin);

  DefaultMemoryProvider memory;
  ModelHostOptions host;
  host.context.global_batch_size = host.context.per_slot_batch_size = options.batch_size;
  host.context.trial_seed = options.seed;
  host.hyperparameters = options.hyperparameters;
  host.memory = &memory;
  absl::StatusOr<std::unique_ptr<LoadedModel>> created =
      LoadedModel::Create(*plugin, std::move(host));
  if (!created.ok()) return CommandError(created.status());
  LoadedModel& model = **created;

  auto print_tensors = [](const char* what, const TensorArena& arena) {
    std::printf("  %s: %zu in %zu arena block(s)\n", what, arena.tensor_count(),
                arena.blocks().size());
    for (size_t t = 0; t < arena.tensor_count(); ++t) {
      const TensorDescriptor& s = arena.spec(t);
      std::printf(
          "    %-24s %-8s %-6s %10llu elements at offset %llu of block %zu\n", s.name.c_str(),
          DtypeName(s.dtype).c_str(), s.device.kind == COHORT_DEVICE_CPU ? "cpu" : "cuda",
          static_cast<unsigned long long>(s.element_count),
          static_cast<unsigned long long>(arena.placement(t).offset), arena.placement(t).block);
    }
  };
  const TensorArena& arena = model.arena();
  print_tensors("tensors", arena);
  if (model.state_arena() != nullptr) print_tensors("state tensors", *model.state_arena());

  absl::StatusOr<uint64_t> train_records = model.DatasetSize(COHORT_SPLIT_TRAINING);
  if (!train_records.ok()) return CommandError(train_records.status());
  absl::StatusOr<uint64_t> validation_records = model.DatasetSize(COHORT_SPLIT_VALIDATION);
  if (!validation_records.ok()) return CommandError(validation_records.status());
  std::printf("  dataset: %llu training records, %llu validation records\n",
              static_cast<unsigned long long>(*train_records),
              static_cast<unsigned long long>(*validation_records));
  if (*train_records == 0)
    return CommandError(absl::FailedPreconditionError("the training split is empty"));

  const BatchSpec train = FirstBatch(COHORT_SPLIT_TRAINING, options.batch_size, *train_records);
  absl::StatusOr<BatchMetrics> trained = model.TrainBatch(train);
  if (!trained.ok()) return CommandError(trained.status());
  std::printf("  train_batch (%zu records):%s\n", train.record_indices.size(),
              FormatMetrics(*trained).c_str());

  int failures = 0;
  // A loss that is not finite makes every finite difference NaN: said first, as the cause.
  if (const Metric* loss = trained->Find("loss"); loss != nullptr && !std::isfinite(loss->value)) {
    ++failures;
    std::printf(
        "  train_batch's loss is %g, not finite: FAILED (the gradient check below cannot "
        "hold; look for an overflow, a log of 0, or values never set)\n",
        loss->value);
  }
  if (*validation_records > 0) {
    const BatchSpec validation =
        FirstBatch(COHORT_SPLIT_VALIDATION, options.batch_size, *validation_records);
    auto checksum = [&] {
      return ArenaChecksum(arena) * 31 +
             (model.state_arena() == nullptr ? 0 : ArenaChecksum(*model.state_arena()));
    };
    const uint64_t before = checksum();
    const uint64_t gradients_before = ArenaChecksum(arena, /*gradients=*/true);
    absl::StatusOr<BatchMetrics> evaluated = model.EvaluateBatch(validation);
    if (!evaluated.ok()) return CommandError(evaluated.status());
    const bool unchanged = checksum() == before;
    const bool gradients_unchanged = ArenaChecksum(arena, /*gradients=*/true) == gradients_before;
    failures += (unchanged ? 0 : 1) + (gradients_unchanged ? 0 : 1);
    std::printf("  evaluate_batch (%zu records):%s\n", validation.record_indices.size(),
                FormatMetrics(*evaluated).c_str());
    std::printf("  evaluate_batch leaves %s unchanged: %s\n",
                model.state_arena() == nullptr ? "parameters" : "parameters and state",
                unchanged ? "passed" : "FAILED");
    std::printf("  evaluate_batch leaves the gradients unchanged: %s\n",
                gradients_unchanged
                    ? "passed"
                    : "FAILED (it must not write into them: training clears them after each "
                      "validation, but a backward pass there is wasted work)");
  }

  const GradientCheckOptions& probe = options.gradients;
  std::printf(
      "  gradient check: step %g, tolerance %g x the gradient + %g + the loss's rounding, "
      "%zu coordinates per tensor\n",
      probe.epsilon, probe.relative_tolerance, probe.absolute_tolerance,
      probe.coordinates_per_tensor);
  absl::StatusOr<GradientCheckReport> gradients = CheckGradients(model, train, probe);
  if (!gradients.ok()) return CommandError(gradients.status());
  for (const CoordinateCheck& c : gradients->coordinates) {
    if (!c.passed) {
      std::printf("    %s[%llu]: analytic %.6g, finite difference %.6g (allowed %.3g apart)\n",
                  c.tensor.c_str(), static_cast<unsigned long long>(c.index), c.analytic, c.numeric,
                  c.tolerance);
    }
  }
  std::printf("  gradient check: %zu coordinate%s, %zu off, max abs error %.3g: %s\n",
              gradients->coordinates.size(), gradients->coordinates.size() == 1 ? "" : "s",
              gradients->failures, gradients->max_abs_error,
              gradients->passed() ? "passed" : "FAILED");
  failures += gradients->passed() ? 0 : 1;

  if (model.has_state()) {
    absl::StatusOr<std::string> saved = model.SaveState();
    if (!saved.ok()) return CommandError(saved.status());
    if (absl::Status s = model.LoadState(*saved); !s.ok()) return CommandError(s);
    absl::StatusOr<std::string> again = model.SaveState();
    if (!again.ok()) return CommandError(again.status());
    const bool same = *again == *saved;
    failures += same ? 0 : 1;
    std::printf("  state round trip (%zu bytes): %s\n", saved->size(), same ? "passed" : "FAILED");
  }
  std::printf(failures == 0 ? "plugin check passed\n" : "plugin check FAILED\n");
  return failures == 0 ? 0 : 1;
}

int ParseCheckOptions(const std::vector<std::string>& args, CheckOptions& options) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool has_value = i + 1 < args.size();
    if (arg == "--hparam" && has_value) {
      if (absl::Status s = SetHyperparameterFromAssignment(args[++i], options.hyperparameters);
          !s.ok())
        return CommandError(s);
    } else if (arg == "--batch-size" && has_value) {
      if (!absl::SimpleAtoi(args[++i], &options.batch_size) || options.batch_size == 0) {
        return CommandError(absl::InvalidArgumentError("--batch-size takes a positive integer"));
      }
    } else if (arg == "--seed" && has_value) {
      if (!absl::SimpleAtoi(args[++i], &options.seed)) {
        return CommandError(absl::InvalidArgumentError("--seed takes a non-negative integer"));
      }
    } else if (arg == "--step" && has_value) {
      if (absl::Status s = ParsePositive(arg, args[++i], false, options.gradients.epsilon);
          !s.ok()) {
        return CommandError(s);
      }
    } else if (arg == "--tolerance" && has_value) {
      if (absl::Status s =
              ParsePositive(arg, args[++i], true, options.gradients.relative_tolerance);
          !s.ok()) {
        return CommandError(s);
      }
    } else if (arg == "--abs-tolerance" && has_value) {
      if (absl::Status s =
              ParsePositive(arg, args[++i], true, options.gradients.absolute_tolerance);
          !s.ok()) {
        return CommandError(s);
      }
    } else if (arg == "--coordinates" && has_value) {
      if (!absl::SimpleAtoi(args[++i], &options.gradients.coordinates_per_tensor) ||
          options.gradients.coordinates_per_tensor == 0) {
        return CommandError(absl::InvalidArgumentError("--coordinates takes a positive integer"));
      }
    } else if (arg == "--timeout" && has_value) {
      if (absl::Status s = ParsePositive(arg, args[++i], true, options.timeout_seconds); !s.ok()) {
        return CommandError(s);
      }
    } else if (options.path.empty() && !arg.starts_with("--")) {
      options.path = arg;
    } else {
      std::fprintf(stderr, "unexpected argument '%s'\n%s", arg.c_str(), kPluginUsage);
      return 2;
    }
  }
  if (options.path.empty()) {
    std::fprintf(stderr, "%s", kPluginUsage);
    return 2;
  }
  // PLUGIN is found as an experiment's entrypoint is: a path as it is (the loader says what is
  // wrong with it), or a name looked up on the plugin path.
  if (!NamesPluginByPath(options.path)) {
    absl::StatusOr<std::string> resolved = ResolveEntrypoint(options.path, "");
    if (!resolved.ok()) return CommandError(resolved.status());
    options.path = *resolved;
  }
  return 0;
}

}  // namespace

int RunPluginCommand(const std::vector<std::string>& args) {
  // `cohort plugin --help`, and `cohort plugin check --help` as `cohort run --help` works.
  if (std::find_if(args.begin(), args.end(), [](const std::string& arg) {
        return arg == "--help" || arg == "-h";
      }) != args.end()) {
    std::fputs(kPluginUsage, stdout);
    return 0;
  }
  if (args.empty() || (args[0] != "info" && args[0] != "check")) {
    std::fprintf(stderr, "%s", kPluginUsage);
    return 2;
  }
  CheckOptions options;
  if (int code = ParseCheckOptions(args, options); code != 0) return code;
  if (args[0] == "info") {
    if (absl::Status loads = CheckPluginLoadsInChild(options.path); !loads.ok()) {
      return CommandError(loads);
    }
    absl::StatusOr<std::shared_ptr<const PluginLibrary>> plugin = PluginLibrary::Open(options.path);
    if (!plugin.ok()) return CommandError(plugin.status());
    PrintInfo(**plugin);
    return 0;
  }
  absl::StatusOr<ChildExit> exit = RunInChild(
      [&] { return RunChecks(options); },
      options.timeout_seconds > 0 ? std::optional<double>(options.timeout_seconds) : std::nullopt);
  if (!exit.ok()) return CommandError(exit.status());
  if (exit->timed_out) {
    std::fprintf(stderr,
                 "error: plugin '%s' did not finish its checks within %g s (--timeout): the "
                 "checking process was killed in the call after the last line it printed\n",
                 options.path.c_str(), options.timeout_seconds);
    return 1;
  }
  if (exit->signaled) {
    std::fprintf(stderr, "error: plugin '%s' crashed: the checking process was %s\n",
                 options.path.c_str(), exit->Describe().c_str());
    return 1;
  }
  if (!exit->body_returned) {
    std::fprintf(stderr,
                 "error: plugin '%s' ended the checking process itself (%s) in the call after the "
                 "last line it printed, before the checks finished: a plugin must not call "
                 "exit()\n",
                 options.path.c_str(), exit->Describe().c_str());
    return 1;
  }
  return exit->code;
}

}  // namespace cohort
