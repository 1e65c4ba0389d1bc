// command_exit.h -- how every `cohort` command ends: its exit status and what it prints first.
//
// Exit statuses: 0 done, 1 error ("error: <message>" on stderr), 2 bad usage ("<command>:
// <problem>", a blank line and the command's usage text on stderr; of a long usage text only its
// synopsis, so that the problem does not scroll away).
//
// Thread-safety: reentrant; prints to stderr.
#ifndef COHORT_HARNESS_COHORT_COMMANDS_COMMAND_EXIT_H_
#define COHORT_HARNESS_COHORT_COMMANDS_COMMAND_EXIT_H_

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace cohort {

// Prints "<command>: <problem>", a blank line and `usage`: all of it when it is short, else its
// first paragraph (the synopsis) and where the rest is; returns 2.
inline int UsageError(absl::string_view command, absl::string_view problem,
                      absl::string_view usage) {
  constexpr std::ptrdiff_t kShortUsageLines = 16;
  std::string shown(usage);
  const size_t synopsis_end = usage.find("\n\n");
  if (std::count(usage.begin(), usage.end(), '\n') > kShortUsageLines &&
      synopsis_end != absl::string_view::npos) {
    shown = absl::StrCat(usage.substr(0, synopsis_end + 1), "(`", command,
                         " --help` lists every option)\n");
  }
  std::fprintf(stderr, "%.*s: %.*s\n\n%s", static_cast<int>(command.size()), command.data(),
               static_cast<int>(problem.size()), problem.data(), shown.c_str());
  return 2;
}

// Prints "error: <message>"; returns 1.
inline int CommandError(absl::string_view message) {
  std::fprintf(stderr, "error: %.*s\n", static_cast<int>(message.size()), message.data());
  return 1;
}

inline int CommandError(const absl::Status& status) { return CommandError(status.message()); }

}  // namespace cohort

#endif  // COHORT_HARNESS_COHORT_COMMANDS_COMMAND_EXIT_H_
