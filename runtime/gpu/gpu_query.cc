#include "runtime/gpu/gpu_query.h"

namespace cohort {

const char* GpuPathName(GpuPath path) {
  switch (path) {
    case GpuPath::kNvLink:
      return "NV";
    case GpuPath::kPcieSwitch:
      return "PIX";
    case GpuPath::kHostBridge:
      return "PHB";
    case GpuPath::kNumaNode:
      return "NODE";
    case GpuPath::kSystem:
      return "SYS";
    case GpuPath::kUnknown:
      break;
  }
  return "?";
}

}  // namespace cohort
