// The service's time, behind an interface so that rate limits, long-polls, retention and the
// canary schedule are unit-tested with a manual clock (tests/support/manual_clock.h).
#pragma once

#include <chrono>

namespace ptxb::service {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch (wall time: stored in job records and compared after restarts).
  virtual double now_seconds() const = 0;
};

class SystemClock final : public Clock {
 public:
  double now_seconds() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace ptxb::service
