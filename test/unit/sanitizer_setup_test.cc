// `meson test --setup asan` must not pass quietly on a build without sanitizers: the setup sets
// COHORT_EXPECT_SANITIZER, and this test fails unless the build is instrumented.
#include <cstdio>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

int main() {
  const bool expected = std::getenv("COHORT_EXPECT_SANITIZER") != nullptr;
  if (expected && !kAddressSanitizer) {
    std::fprintf(stderr,
                 "the asan test setup needs a sanitized build: configure with "
                 "-Db_sanitize=address,undefined (scripts/test --asan does)\n");
    return 1;
  }
  std::printf("address sanitizer %s\n", kAddressSanitizer ? "on" : "off");
  return 0;
}
