#include "runtime/agent/gpu_slots.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cohort {
namespace {

// The value of the `key` line of a GPU's information file ("Model:", "GPU UUID:"); empty when
// there is none.
std::string ValueOf(const std::filesystem::path& information, absl::string_view key) {
  std::ifstream file(information);
  std::string line;
  while (std::getline(file, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, key)) return std::string(absl::StripAsciiWhitespace(rest));
  }
  return "";
}

// "0 (0000:3b:00.0, GPU-8932f937-...), 1 (...)": the GPUs an entry may name.
std::string Listed(const std::vector<DetectedGpu>& gpus) {
  if (gpus.empty()) return "none";
  std::vector<std::string> each;
  for (size_t i = 0; i < gpus.size(); ++i) {
    each.push_back(absl::StrCat(i, " (", gpus[i].bus_id,
                                gpus[i].uuid.empty() ? "" : ", " + gpus[i].uuid, ")"));
  }
  return absl::StrJoin(each, ", ");
}

}  // namespace

std::vector<DetectedGpu> DetectGpus(const std::string& gpus_folder) {
  std::vector<std::string> bus_ids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(gpus_folder, error)) {
    if (entry.is_directory(error)) bus_ids.push_back(entry.path().filename().string());
  }
  std::sort(bus_ids.begin(), bus_ids.end());
  std::vector<DetectedGpu> gpus;
  for (const std::string& bus_id : bus_ids) {
    const std::filesystem::path information =
        std::filesystem::path(gpus_folder) / bus_id / "information";
    std::string model = ValueOf(information, "Model:");
    gpus.push_back(
        {bus_id, model.empty() ? "NVIDIA GPU" : model, ValueOf(information, "GPU UUID:")});
  }
  return gpus;
}

std::vector<AgentSlot> DetectGpuSlots(const std::string& gpus_folder) {
  return *VisibleGpuSlots(std::nullopt, gpus_folder);
}

absl::StatusOr<std::vector<AgentSlot>> VisibleGpuSlots(const std::optional<std::string>& visible,
                                                       const std::string& gpus_folder) {
  const std::vector<DetectedGpu> gpus = DetectGpus(gpus_folder);
  std::vector<AgentSlot> slots;
  // Slot i is the i-th GPU offered; its device is the GPU's index in PCI bus order.
  const auto offer = [&](size_t gpu) {
    slots.push_back(AgentSlot{static_cast<uint32_t>(slots.size()), SlotKind::kGpu,
                              static_cast<int32_t>(gpu), gpus[gpu].model});
  };
  if (!visible || gpus.empty()) {
    for (size_t gpu = 0; gpu < gpus.size(); ++gpu) offer(gpu);
    return slots;
  }
  const auto refuse = [&](absl::string_view entry, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA_VISIBLE_DEVICES=", *visible, ": '", entry, "' ", why,
        "; the driver lists these GPUs (index in PCI bus order, bus id, UUID): ", Listed(gpus)));
  };
  std::vector<bool> named(gpus.size(), false);
  for (absl::string_view raw : absl::StrSplit(*visible, ',')) {
    const absl::string_view entry = absl::StripAsciiWhitespace(raw);
    if (entry.empty()) continue;
    size_t gpu = gpus.size();
    if (int64_t index = 0; absl::SimpleAtoi(entry, &index)) {
      if (index < 0) break;  // CUDA stops reading here
      if (static_cast<uint64_t>(index) >= gpus.size()) {
        return refuse(entry, "is past the last GPU");
      }
      gpu = static_cast<size_t>(index);
    } else if (absl::StartsWithIgnoreCase(entry, "MIG-")) {
      return refuse(entry, "is a MIG instance: slots are whole GPUs");
    } else if (absl::StartsWithIgnoreCase(entry, "GPU-")) {
      for (size_t i = 0; i < gpus.size(); ++i) {
        if (!absl::StartsWithIgnoreCase(gpus[i].uuid, entry)) continue;
        if (gpu != gpus.size()) return refuse(entry, "names more than one GPU");
        gpu = i;
      }
      if (gpu == gpus.size()) return refuse(entry, "is no GPU's UUID");
    } else {
      return refuse(entry, "is neither a GPU's index nor its UUID");
    }
    if (named[gpu]) return refuse(entry, "names a GPU named before it");
    named[gpu] = true;
    offer(gpu);
  }
  return slots;
}

std::optional<std::string> CudaVisibleDevices() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return std::nullopt;
  return std::string(visible);
}

}  // namespace cohort
