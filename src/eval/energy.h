// Energy per call (timing fidelity): what the supervisor's energy phase records, and its
// arithmetic. Pure C++; the phase itself is supervisor/stage_energy.cc.
//
// NVML's total-energy counter is device-wide and updates at its own period (measured in every
// phase: the counter is polled every millisecond while the GPU idles, and the median interval
// between changes is recorded). Each side runs back-to-back batches of its calls for at least a
// second, so the counter's period is a small part of the window; the power the GPU draws while
// idle right before is subtracted, leaving the energy of the calls themselves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct EnergySide {
  std::uint64_t calls = 0;
  double seconds = 0;     // the back-to-back window, between the two counter readings
  double joules = 0;      // counter difference over the window
  double idle_watts = 0;  // measured just before the window
  double joules_per_call = 0;

  Json to_json() const;
  static Result<EnergySide> from_json(const Json& json);
};

// workloads[].energy in the trace.
struct EnergyRecord {
  std::optional<double> counter_period_ms;  // median interval between counter changes
  std::optional<EnergySide> reference, candidate;
  std::optional<double>
      ratio;         // candidate J/call ÷ reference J/call (< 1: the candidate is leaner)
  std::string note;  // why a side is missing, when one is

  Json to_json() const;
  static Result<EnergyRecord> from_json(const Json& json);
};

// One reading of the counter: time (ms), counter (mJ), calls completed so far (0 while idle).
struct EnergyPoll {
  double ms = 0;
  std::uint64_t mj = 0;
  std::uint64_t calls = 0;
};

// (joules − idle_watts × seconds) / calls; 0 without calls.
double net_joules_per_call(double joules, double idle_watts, double seconds, std::uint64_t calls);

// Median interval in ms between successive changes of the counter in `polls`, nullopt with fewer
// than two changes.
std::optional<double> counter_period_ms(const std::vector<EnergyPoll>& polls);

// The window between the first and the last change of the counter among `polls` (read after
// every batch): the only instants where the counter's value is exact, so a counter that updates
// every ~100 ms (the H200) costs no accuracy. Fills calls, seconds, joules and joules_per_call
// (idle_watts must be set); false with fewer than two changes or no call between them.
bool energy_between_changes(const std::vector<EnergyPoll>& polls, EnergySide& side);

// Watts from `polls`: energy between the first and the last change over the time between them
// (the only instants where the counter's value is exact); nullopt with fewer than two changes.
std::optional<double> watts_between_changes(const std::vector<EnergyPoll>& polls);

}  // namespace ptxb
