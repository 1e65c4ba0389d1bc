// FUZZ_CHECK: the invariant check of a fuzz target. A failed check prints what failed and aborts,
// which libFuzzer (and the corpus replay) reports as a crash with the input that caused it.
#ifndef COHORT_FUZZ_FUZZ_CHECK_H_
#define COHORT_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                              \
  do {                                                                                           \
    if (!(condition)) {                                                                          \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s: %s\n", __FILE__, __LINE__, #condition, \
                   std::string(what).c_str());                                                   \
      std::abort();                                                                              \
    }                                                                                            \
  } while (false)

#endif  // COHORT_FUZZ_FUZZ_CHECK_H_
