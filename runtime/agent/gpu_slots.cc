#include "runtime/agent/gpu_slots.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace cohort {
namespace {

// The value of the "Model:" line of a GPU's information file; empty when there is none.
std::string ModelOf(const std::filesystem::path& information) {
  std::ifstream file(information);
  std::string line;
  while (std::getline(file, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "Model:")) return std::string(absl::StripAsciiWhitespace(rest));
  }
  return "";
}

}  // namespace

std::vector<AgentSlot> DetectGpuSlots(const std::string& gpus_folder) {
  std::vector<std::string> bus_ids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(gpus_folder, error)) {
    if (entry.is_directory(error)) bus_ids.push_back(entry.path().filename().string());
  }
  std::sort(bus_ids.begin(), bus_ids.end());
  std::vector<AgentSlot> slots;
  for (const std::string& bus_id : bus_ids) {
    const uint32_t index = static_cast<uint32_t>(slots.size());
    std::string model = ModelOf(std::filesystem::path(gpus_folder) / bus_id / "information");
    slots.push_back(AgentSlot{index, SlotKind::kGpu, static_cast<int32_t>(index),
                              model.empty() ? "NVIDIA GPU" : model});
  }
  return slots;
}

}  // namespace cohort
