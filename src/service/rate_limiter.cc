#include "service/rate_limiter.h"

#include <algorithm>

namespace ptxb::service {

RateDecision RateLimiter::admit(const std::string& client, const ClientLimits& limits) {
  const double now = clock_.now_seconds();
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = buckets_.try_emplace(client, Bucket{limits.burst, now});
  Bucket& bucket = it->second;
  // A clock stepping backwards (NTP) refills nothing rather than draining.
  const double elapsed = std::max(0.0, now - bucket.updated);
  bucket.tokens = std::min(limits.burst, bucket.tokens + elapsed * limits.rate_per_second);
  bucket.updated = now;
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    return {true, 0};
  }
  return {false, (1.0 - bucket.tokens) / limits.rate_per_second};
}

}  // namespace ptxb::service
