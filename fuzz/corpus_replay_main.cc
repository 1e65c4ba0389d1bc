// The main() of a fuzz target in a build without libFuzzer: runs every file named on the command
// line (or found in a named folder) through LLVMFuzzerTestOneInput once. The test suite runs each
// target over its checked-in corpus this way, so the seeds stay valid inputs for every compiler
// and sanitizer; `scripts/fuzz` does the fuzzing proper with clang.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> InputsOf(const std::filesystem::path& path) {
  if (!std::filesystem::is_directory(path)) return {path};
  std::vector<std::filesystem::path> inputs;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    if (entry.is_regular_file()) inputs.push_back(entry.path());
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    for (const std::filesystem::path& input : InputsOf(argv[i])) {
      std::ifstream file(input, std::ios::binary);
      if (!file) {
        std::fprintf(stderr, "cannot read %s\n", input.c_str());
        return 1;
      }
      const std::string bytes{std::istreambuf_iterator<char>(file),
                              std::istreambuf_iterator<char>()};
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  // An empty corpus would make the test pass while checking nothing.
  if (replayed == 0) {
    std::fprintf(stderr, "no inputs found in the paths given\n");
    return 1;
  }
  std::printf("replayed %zu inputs without a failure\n", replayed);
  return 0;
}
