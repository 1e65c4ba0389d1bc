#include "runtime/base/process_state.h"

#include <fstream>
#include <iterator>
#include <string>

namespace cohort {

std::optional<char> ProcessState(int pid) {
  if (pid <= 0) return std::nullopt;
  // "pid (comm) state ...": the command in parentheses may hold spaces and parentheses itself.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return std::nullopt;
  return text[paren + 2];
}

}  // namespace cohort
