#include "runtime/launch/launcher_environment.h"

#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cohort {
namespace {

// One launcher's variables: rank, world size, local rank, and where rank 0's host comes from.
struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* world_size;
  const char* local_rank;
};

constexpr LauncherVariables kTorchrun = {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"};
constexpr LauncherVariables kSlurm = {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"};
constexpr LauncherVariables kMpirun = {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                       "OMPI_COMM_WORLD_LOCAL_RANK"};

// The variable as a whole number from `low` to `high`.
absl::StatusOr<uint64_t> Number(const Environment& environment, const char* name, uint64_t low,
                                uint64_t high) {
  const std::optional<std::string> text = environment(name);
  uint64_t value = 0;
  if (!text || !absl::SimpleAtoi(*text, &value) || value < low || value > high) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, "=", text.value_or(""), ": expected a whole number from ", low, " to ", high));
  }
  return value;
}

// The names among `names` that are set, and those that are not.
void Split(const Environment& environment, const std::vector<const char*>& names,
           std::vector<std::string>* set, std::vector<std::string>* missing) {
  for (const char* name : names) {
    (environment(name) ? set : missing)->push_back(name);
  }
}

absl::StatusOr<LaunchPlacement> Read(const Environment& environment,
                                     const LauncherVariables& variables) {
  LaunchPlacement placement;
  placement.launcher = variables.launcher;
  absl::StatusOr<uint64_t> world =
      Number(environment, variables.world_size, 1, std::numeric_limits<uint32_t>::max());
  if (!world.ok()) return world.status();
  absl::StatusOr<uint64_t> rank = Number(environment, variables.rank, 0, *world - 1);
  if (!rank.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(rank.status().message(), " (below ", variables.world_size, "=", *world, ")"));
  }
  absl::StatusOr<uint64_t> local = Number(environment, variables.local_rank, 0, *world - 1);
  if (!local.ok()) return local.status();
  placement.world_size = static_cast<uint32_t>(*world);
  placement.rank = static_cast<uint32_t>(*rank);
  placement.local_rank = static_cast<uint32_t>(*local);

  uint64_t default_port = kDefaultMasterPort;
  if (const std::optional<std::string> address = environment("MASTER_ADDR")) {
    placement.master_addr = *address;
  } else if (placement.launcher == std::string("slurm")) {
    const std::optional<std::string> nodes = environment("SLURM_JOB_NODELIST");
    if (!nodes) {
      return absl::InvalidArgumentError(
          "SLURM_JOB_NODELIST is not set (nor MASTER_ADDR): rank 0's host is its first node");
    }
    absl::StatusOr<std::string> first = FirstSlurmHost(*nodes);
    if (!first.ok()) return first.status();
    placement.master_addr = *first;
  } else {
    // torchrun sets MASTER_PORT beside it; under mpirun a port not set is the default.
    return absl::InvalidArgumentError(absl::StrCat(
        "MASTER_ADDR is not set: ", placement.launcher, " ranks need rank 0's host there",
        placement.launcher == std::string("torchrun")
            ? " (and MASTER_PORT, as torchrun sets both)"
            : absl::StrCat(" (and MASTER_PORT, default ", kDefaultMasterPort, ")")));
  }
  if (placement.master_addr.empty()) {
    return absl::InvalidArgumentError("MASTER_ADDR is empty: expected rank 0's host");
  }
  if (placement.launcher == std::string("slurm") && !environment("MASTER_PORT")) {
    if (environment("SLURM_JOB_ID")) {
      absl::StatusOr<uint64_t> job =
          Number(environment, "SLURM_JOB_ID", 0, std::numeric_limits<uint64_t>::max());
      if (!job.ok()) return job.status();
      default_port = 20000 + *job % 20000;
    }
  }
  if (environment("MASTER_PORT")) {
    absl::StatusOr<uint64_t> port = Number(environment, "MASTER_PORT", 1, 65535);
    if (!port.ok()) return port.status();
    placement.master_port = static_cast<uint16_t>(*port);
  } else if (placement.launcher == std::string("torchrun")) {
    return absl::InvalidArgumentError(
        "MASTER_PORT is not set: torchrun sets it beside MASTER_ADDR");
  } else {
    placement.master_port = static_cast<uint16_t>(default_port);
  }
  if (environment("COHORT_LAUNCH_PORT")) {
    absl::StatusOr<uint64_t> port = Number(environment, "COHORT_LAUNCH_PORT", 1, 65535);
    if (!port.ok()) return port.status();
    placement.master_port = static_cast<uint16_t>(*port);
  } else if (placement.launcher == std::string("torchrun") &&
             environment("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True") {
    // torchrun's own agent holds MASTER_PORT on rank 0's host (its store).
    if (placement.master_port == 65535) {
      return absl::InvalidArgumentError(
          "MASTER_PORT=65535 is torchrun's store, and no port follows it for rank 0 to serve at: "
          "set COHORT_LAUNCH_PORT");
    }
    ++placement.master_port;
  }
  return placement;
}

}  // namespace

Environment SystemEnvironment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

absl::StatusOr<LaunchPlacement> ReadLauncherEnvironment(const Environment& environment) {
  for (const LauncherVariables& variables : {kTorchrun, kSlurm, kMpirun}) {
    std::vector<std::string> set;
    std::vector<std::string> missing;
    Split(environment, {variables.rank, variables.world_size, variables.local_rank}, &set,
          &missing);
    if (set.empty()) continue;
    if (!missing.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(absl::StrJoin(set, ", "), (set.size() == 1 ? " is" : " are"), " set but ",
                       absl::StrJoin(missing, ", "), (missing.size() == 1 ? " is" : " are"),
                       " not: a ", variables.launcher, " launch sets all of ", variables.rank, ", ",
                       variables.world_size, " and ", variables.local_rank));
    }
    return Read(environment, variables);
  }
  return absl::InvalidArgumentError(
      "no launcher's variables are set: expected torchrun's RANK, WORLD_SIZE, LOCAL_RANK, "
      "MASTER_ADDR, MASTER_PORT; or Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, "
      "SLURM_JOB_NODELIST; or Open MPI's OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, "
      "OMPI_COMM_WORLD_LOCAL_RANK with MASTER_ADDR");
}

absl::StatusOr<std::string> FirstSlurmHost(absl::string_view nodelist) {
  // The first entry: up to the first comma outside brackets.
  size_t end = 0;
  int depth = 0;
  for (; end < nodelist.size(); ++end) {
    if (nodelist[end] == '[') ++depth;
    if (nodelist[end] == ']') --depth;
    if (nodelist[end] == ',' && depth == 0) break;
  }
  const absl::string_view entry = nodelist.substr(0, end);
  if (entry.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SLURM_JOB_NODELIST='", nodelist, "': expected a list of hosts"));
  }
  const size_t open = entry.find('[');
  if (open == absl::string_view::npos) return std::string(entry);
  const size_t close = entry.find(']', open);
  if (close == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("SLURM_JOB_NODELIST='", nodelist, "': a '[' is not closed"));
  }
  // Within the brackets, the first range or number: "07-09,12" gives "07" (its zeros kept).
  const absl::string_view ranges = entry.substr(open + 1, close - open - 1);
  const size_t stop = ranges.find_first_of("-,");
  return absl::StrCat(entry.substr(0, open), ranges.substr(0, stop), entry.substr(close + 1));
}

}  // namespace cohort
