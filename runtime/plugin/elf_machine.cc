#include "runtime/plugin/elf_machine.h"

#include <elf.h>

#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace cohort {
namespace {

std::string MachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86_64";
    case EM_386:
      return "i386";
    case EM_AARCH64:
      return "aarch64";
    case EM_ARM:
      return "arm";
    case EM_PPC64:
      return "ppc64";
    case EM_RISCV:
      return "riscv";
    case EM_S390:
      return "s390";
  }
  return absl::StrCat("ELF machine ", machine);
}

std::string Describe(uint16_t machine, unsigned char word) {
  return absl::StrCat(MachineName(machine), " (", word == ELFCLASS64 ? "64" : "32", "-bit)");
}

// This process's machine and word size, from its own ELF header.
bool OwnMachine(uint16_t* machine, unsigned char* word) {
  std::ifstream self("/proc/self/exe", std::ios::binary);
  unsigned char header[EI_NIDENT + 4] = {};
  if (!self.read(reinterpret_cast<char*>(header), sizeof header)) return false;
  *word = header[EI_CLASS];
  std::memcpy(machine, header + EI_NIDENT + 2, sizeof *machine);
  return true;
}

}  // namespace

std::optional<std::string> ElfMachineMismatch(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  unsigned char header[EI_NIDENT + 4] = {};  // e_ident, e_type, e_machine
  if (!file.read(reinterpret_cast<char*>(header), sizeof header)) return std::nullopt;
  if (std::memcmp(header, ELFMAG, SELFMAG) != 0) return std::nullopt;
  uint16_t machine = 0;
  std::memcpy(&machine, header + EI_NIDENT + 2, sizeof machine);  // little-endian hosts
  const unsigned char word = header[EI_CLASS];
  uint16_t own_machine = 0;
  unsigned char own_word = 0;
  if (!OwnMachine(&own_machine, &own_word)) return std::nullopt;
  if (machine == own_machine && word == own_word) return std::nullopt;
  return absl::StrCat("built for ", Describe(machine, word), ", but this machine runs ",
                      Describe(own_machine, own_word));
}

}  // namespace cohort
