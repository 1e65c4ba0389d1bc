#include "runtime/trial/trial_state.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "runtime/arena/block_staging.h"
#include "runtime/arena/dtype.h"
#include "runtime/arena/host_buffer.h"
#include "runtime/optim/optimizer_state.h"

namespace cohort {

namespace {

void AppendLayout(const TensorArena& arena, absl::string_view suffix, std::string& layout) {
  for (size_t i = 0; i < arena.tensor_count(); ++i) {
    const TensorDescriptor& spec = arena.spec(i);
    absl::StrAppend(&layout, spec.name, " ", DtypeName(spec.dtype), " ", spec.element_count, " ",
                    DeviceName(spec.device), suffix, "\n");
  }
}

// Every block's values, one after another, into `values` (its memory reused when large enough);
// a device's through `staged` when given.
absl::Status BlockValues(const TensorArena& arena, std::string& values, StagedHostCopies* staged) {
  size_t total = 0;
  for (const ArenaBlock& block : arena.blocks()) total += BlockBytes(block);
  ReserveHostBuffer(values, total);
  values.resize(total);
  size_t at = 0;
  for (const ArenaBlock& block : arena.blocks()) {
    if (absl::Status copied =
            CopyBlockToHost(block, BlockPart::kParameters, values.data() + at, staged);
        !copied.ok()) {
      return copied;
    }
    at += BlockBytes(block);
  }
  return absl::OkStatus();
}

// DATA_LOSS, naming `file`, when `values` is not the size of the arena's blocks.
absl::Status CheckValuesSize(const TensorArena& arena, const std::string& values,
                             absl::string_view file) {
  size_t total = 0;
  for (const ArenaBlock& block : arena.blocks()) total += BlockBytes(block);
  if (values.size() == total) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("checkpoint file '", file, "' holds ", values.size(),
                                          " bytes; the tensors need ", total));
}

// Writes what BlockValues read (of a size CheckValuesSize accepted) back into the blocks.
absl::Status WriteBlockValues(const TensorArena& arena, const std::string& values) {
  size_t offset = 0;
  for (const ArenaBlock& block : arena.blocks()) {
    if (absl::Status copied =
            CopyBlockFromHost(block, BlockPart::kParameters, values.data() + offset);
        !copied.ok()) {
      return copied;
    }
    offset += BlockBytes(block);
  }
  return absl::OkStatus();
}

std::string EncodeProgress(const TrialProgress& progress) {
  return absl::StrCat(
      "batches_trained=", progress.batches_trained, "\n",
      "records_trained=", progress.records_trained, "\n", "trial_seed=", progress.trial_seed, "\n",
      "optimizer_steps=", progress.optimizer_steps, "\n",
      progress.best_metric ? absl::StrFormat("best_metric=%.17g\n", *progress.best_metric)
                           : std::string());
}

absl::StatusOr<TrialProgress> DecodeProgress(const std::string& text) {
  TrialProgress progress;
  std::map<std::string, uint64_t*> fields = {{"batches_trained", &progress.batches_trained},
                                             {"records_trained", &progress.records_trained},
                                             {"trial_seed", &progress.trial_seed},
                                             {"optimizer_steps", &progress.optimizer_steps}};
  size_t found = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (double best; kv.first == "best_metric" && absl::SimpleAtod(kv.second, &best)) {
      progress.best_metric = best;
      continue;
    }
    auto it = fields.find(kv.first);
    if (it == fields.end() || !absl::SimpleAtoi(kv.second, it->second)) {
      return absl::DataLossError(absl::StrCat("checkpoint file 'progress': bad line '", line, "'"));
    }
    ++found;
  }
  if (found != fields.size()) {
    return absl::DataLossError("checkpoint file 'progress' is incomplete");
  }
  return progress;
}

absl::StatusOr<const std::string*> File(const std::map<std::string, std::string>& files,
                                        const std::string& name) {
  auto it = files.find(name);
  if (it == files.end()) {
    return absl::DataLossError(absl::StrCat("checkpoint has no '", name, "' file"));
  }
  return &it->second;
}

}  // namespace

std::string TensorLayout(const TensorArena& arena, const TensorArena* state) {
  std::string layout;
  AppendLayout(arena, "", layout);
  if (state != nullptr) AppendLayout(*state, " state", layout);
  return layout;
}

absl::StatusOr<std::map<std::string, std::string>> CaptureTrialState(
    LoadedModel& model, const Optimizer* optimizer, const TrialProgress& progress,
    std::map<std::string, std::string> spare, bool unsealed, const OptimizerState::PieceMover* move,
    StagedHostCopies* staged) {
  if (staged != nullptr && !unsealed) {
    return absl::InvalidArgumentError("staged copies are captured unsealed: they land later");
  }
  std::map<std::string, std::string> files;
  // File `name`, in spare's buffer of that name when there is one.
  const auto file = [&](const std::string& name) -> std::string& {
    std::string& contents = files[name];
    if (auto old = spare.find(name); old != spare.end()) contents = std::move(old->second);
    return contents;
  };
  files["tensors"] = TensorLayout(model.arena(), model.state_arena());
  if (absl::Status copied = BlockValues(model.arena(), file("parameters"), staged); !copied.ok()) {
    return copied;
  }
  if (model.state_arena() != nullptr) {
    if (absl::Status copied = BlockValues(*model.state_arena(), file("state"), staged);
        !copied.ok()) {
      return copied;
    }
  }
  if (optimizer != nullptr && !optimizer->shard().whole()) {
    if (move == nullptr) {
      return absl::InvalidArgumentError("a sharded optimizer is saved through a piece mover");
    }
    if (absl::Status whole =
            optimizer->SaveWholeStateInto(*move, &file("optimizer"), /*sealed=*/!unsealed);
        !whole.ok()) {
      return whole;
    }
  } else if (optimizer != nullptr) {
    std::string& bytes = file("optimizer");
    optimizer->SaveStateInto(bytes, /*sealed=*/!unsealed, staged);
    // Never empty but when a copy from the device failed.
    if (bytes.empty()) return absl::InternalError("the optimizer's state could not be copied");
  }
  files["progress"] = EncodeProgress(progress);
  if (model.has_state()) {
    absl::StatusOr<std::string> state = model.SaveState();
    if (!state.ok()) return state.status();
    files["plugin_state"] = *std::move(state);
  }
  return files;
}

void SealTrialState(std::map<std::string, std::string>& files) {
  if (auto optimizer = files.find("optimizer"); optimizer != files.end()) {
    SealOptimizerState(optimizer->second);
  }
}

absl::StatusOr<TrialProgress> RestoreTrialState(const std::map<std::string, std::string>& files,
                                                LoadedModel& model, Optimizer* optimizer) {
  TensorArena& arena = model.arena();
  const TensorArena* state = model.state_arena();

  absl::StatusOr<const std::string*> layout = File(files, "tensors");
  if (!layout.ok()) return layout.status();
  if (**layout != TensorLayout(arena, state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the checkpoint was written for other tensors.\ncheckpoint:\n", **layout,
                     "this model:\n", TensorLayout(arena, state)));
  }
  absl::StatusOr<const std::string*> parameters = File(files, "parameters");
  if (!parameters.ok()) return parameters.status();
  if (absl::Status size = CheckValuesSize(arena, **parameters, "parameters"); !size.ok())
    return size;
  const std::string* state_values = nullptr;
  if (state != nullptr) {
    absl::StatusOr<const std::string*> found = File(files, "state");
    if (!found.ok()) return found.status();
    if (absl::Status size = CheckValuesSize(*state, **found, "state"); !size.ok()) return size;
    state_values = *found;
  }
  const bool saved_optimizer = files.count("optimizer") != 0;
  if (saved_optimizer != (optimizer != nullptr)) {
    return absl::FailedPreconditionError(
        saved_optimizer ? "the checkpoint holds built-in optimizer state, but the plugin now "
                          "steps its own parameters"
                        : "the checkpoint was written by a plugin that stepped its own "
                          "parameters; it holds no built-in optimizer state");
  }
  if (model.has_state() && files.count("plugin_state") == 0) {
    return absl::DataLossError("checkpoint has no 'plugin_state' file, but the plugin keeps state");
  }
  absl::StatusOr<const std::string*> progress_text = File(files, "progress");
  if (!progress_text.ok()) return progress_text.status();
  absl::StatusOr<TrialProgress> progress = DecodeProgress(**progress_text);
  if (!progress.ok()) return progress.status();

  if (optimizer != nullptr) {
    if (absl::Status status = optimizer->LoadState(files.at("optimizer")); !status.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the checkpoint's optimizer state does not fit this optimizer: ", status.message()));
    }
  }
  if (absl::Status written = WriteBlockValues(arena, **parameters); !written.ok()) return written;
  if (state != nullptr) {
    if (absl::Status written = WriteBlockValues(*state, *state_values); !written.ok())
      return written;
  }
  if (absl::Status status = arena.ZeroGradients(); !status.ok()) return status;
  // Last: the plugin's load_state sees the tensors as the checkpoint holds them.
  if (model.has_state()) {
    if (absl::Status status = model.LoadState(files.at("plugin_state")); !status.ok()) {
      return status;
    }
  }
  return progress;
}

std::string ReadyOrderText(const std::vector<uint32_t>& order) {
  return absl::StrCat(absl::StrJoin(order, " "), "\n");
}

absl::StatusOr<std::vector<uint32_t>> ParseReadyOrder(absl::string_view text) {
  if (!absl::ConsumeSuffix(&text, "\n")) {
    return absl::DataLossError("checkpoint file 'ready_order' does not end in a newline");
  }
  std::vector<uint32_t> order;
  for (absl::string_view field : absl::StrSplit(text, ' ')) {
    // Digits only: SimpleAtoi alone would also take a sign and surrounding spaces.
    uint32_t tensor = 0;
    if (!std::all_of(field.begin(), field.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(field, &tensor)) {
      return absl::DataLossError(absl::StrCat("checkpoint file 'ready_order' holds '",
                                              absl::CEscape(field), "' where a tensor index goes"));
    }
    order.push_back(tensor);
  }
  return order;
}

}  // namespace cohort
