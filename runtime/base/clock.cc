#include "runtime/base/clock.h"

#include <chrono>

namespace cohort {
namespace {

class RealClock final : public Clock {
 public:
  double UnixSeconds() override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  double MonotonicSeconds() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock& SystemClock() {
  static RealClock clock;
  return clock;
}

}  // namespace cohort
