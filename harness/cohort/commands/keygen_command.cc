#include "harness/cohort/commands/keygen_command.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "harness/cohort/commands/command_exit.h"
#include "harness/cohort/run/launch_keys.h"
#include "runtime/security/curve_keys.h"

namespace cohort {
namespace {

constexpr char kKeygenUsage[] =
    "usage: cohort keygen --out DIR [--name NAME]\n"
    "       cohort keygen --out DIR --launch WORLD_SIZE\n"
    "\n"
    "Makes a CURVE key pair for the control channels and writes DIR/NAME.key (the secret key,\n"
    "mode 0600: it never leaves this machine) and DIR/NAME.pub (the public key, to hand to "
    "peers).\n"
    "DIR is created (mode 0700) if missing; existing keys are never overwritten. NAME defaults to "
    "this\n"
    "machine's host name; it is what the orchestrator calls the holder of the key.\n"
    "\n"
    "Prints `<public-key> <name>`: add that line to the orchestrator's authorized keys file (or\n"
    "copy NAME.pub into its authorized keys folder) to let this key in.\n"
    "\n"
    "--launch WORLD_SIZE makes the keys of one job of `cohort launch --keys DIR` instead:\n"
    "orchestrator.key/.pub and rank-<r>.key/.pub for each rank. Give every rank the folder\n"
    "(whoever holds it may join the job).\n";

std::string DefaultKeyName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "cohort";
  std::string host(name);
  host = host.substr(0, host.find('.'));  // the short name
  return IsKeyName(host) ? host : "cohort";
}

}  // namespace

int RunKeygenCommand(const std::vector<std::string>& args) {
  std::string out;
  std::string name;
  uint32_t launch_ranks = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(kKeygenUsage, stdout);
      return 0;
    } else if (args[i] == "--out" && has_value) {
      out = args[++i];
    } else if (args[i] == "--name" && has_value) {
      name = args[++i];
    } else if (args[i] == "--launch" && has_value) {
      if (!absl::SimpleAtoi(args[++i], &launch_ranks) || launch_ranks == 0) {
        std::fprintf(stderr, "--launch needs a world size >= 1, not '%s'\n%s", args[i].c_str(),
                     kKeygenUsage);
        return 2;
      }
    } else {
      std::fprintf(stderr, "unexpected argument '%s'\n%s", args[i].c_str(), kKeygenUsage);
      return 2;
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "%s", kKeygenUsage);
    return 2;
  }
  if (launch_ranks > 0) {
    if (!name.empty()) {
      std::fprintf(stderr, "--launch names its keys itself: no --name\n%s", kKeygenUsage);
      return 2;
    }
    if (absl::Status made = WriteLaunchKeys(out, launch_ranks); !made.ok()) {
      return CommandError(made);
    }
    std::fprintf(stderr, "wrote the keys of a job of %u ranks in %s: give every rank the folder\n",
                 launch_ranks, out.c_str());
    return 0;
  }
  if (name.empty()) name = DefaultKeyName();
  if (!IsKeyName(name)) {
    return CommandError(
        "'" + name +
        "' is not a key name: use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with . or -");
  }
  std::error_code error;
  if (std::filesystem::create_directories(out, error)) {
    std::filesystem::permissions(out, std::filesystem::perms::owner_all, error);
  }
  if (error) return CommandError("cannot create " + out + ": " + error.message());
  absl::StatusOr<CurveKeyPair> keys = GenerateCurveKeyPair();
  if (!keys.ok()) return CommandError(keys.status());
  const std::string secret_path = out + "/" + name + ".key";
  const std::string public_path = out + "/" + name + ".pub";
  // Both files or neither: check the public one is free before writing the secret one.
  if (::access(public_path.c_str(), F_OK) == 0)
    return CommandError(public_path + " already exists (keys are never overwritten)");
  if (absl::Status s = WriteSecretKeyFile(secret_path, name, *keys); !s.ok())
    return CommandError(s);
  if (absl::Status s = WritePublicKeyFile(public_path, name, keys->public_key); !s.ok()) {
    ::unlink(secret_path.c_str());
    return CommandError(s);
  }
  std::fprintf(stderr, "wrote %s (secret, mode 0600) and %s\n", secret_path.c_str(),
               public_path.c_str());
  std::printf("%s %s\n", keys->public_key.c_str(), name.c_str());
  return 0;
}

}  // namespace cohort
