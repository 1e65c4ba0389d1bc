// ElfMachineMismatch: why a shared library built for another machine does not load, which dlopen
// itself reports as "No such file or directory". Reads the ELF header only.
//
//   if (std::optional<std::string> why = ElfMachineMismatch(path)) ...;  // "built for aarch64 ..."
//
// Thread-safety: reads the file; safe from any thread.
#ifndef COHORT_RUNTIME_PLUGIN_ELF_MACHINE_H_
#define COHORT_RUNTIME_PLUGIN_ELF_MACHINE_H_

#include <optional>
#include <string>

namespace cohort {

// "built for aarch64 (64-bit), but this machine runs x86_64 (64-bit)" when `path` is an ELF file
// of another machine or word size than this process; nullopt when it matches or is no ELF file.
std::optional<std::string> ElfMachineMismatch(const std::string& path);

}  // namespace cohort

#endif  // COHORT_RUNTIME_PLUGIN_ELF_MACHINE_H_
