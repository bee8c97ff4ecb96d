// Wall-clock helpers shared by every layer that stamps records (traces, turn records, runs).
#pragma once

#include <string>

namespace ptxb {

// Now, as ISO 8601 UTC with second resolution: "2026-11-29T13:05:00Z".
std::string iso_utc_now();

}  // namespace ptxb
