// Per-client request rate limit: a token bucket per client name, refilled continuously at the
// client's rate up to its burst. A refused request learns when one token will be there
// (HTTP 429 with Retry-After, rounded up to whole seconds by the front end).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "service/clock.h"
#include "service/tokens.h"

namespace ptxb::service {

struct RateDecision {
  bool allowed = true;
  double retry_after_seconds = 0;  // when refused: until the bucket holds one token
};

class RateLimiter {
 public:
  explicit RateLimiter(const Clock& clock) : clock_(clock) {}
  RateDecision admit(const std::string& client, const ClientLimits& limits);

 private:
  struct Bucket {
    double tokens = 0;
    double updated = 0;
  };
  const Clock& clock_;
  std::mutex mutex_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace ptxb::service
