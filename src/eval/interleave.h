// Interleaved timing (timing fidelity): the arithmetic and the record, pure C++; the GPU loop is
// supervisor/stage_timing.cc.
//
// Timed one after the other, the reference and the candidate see different clocks: on the H200
// a sustained backward pass drifts from 1980 to 1770-1860 MHz within seconds (sw_power_cap), so
// the side timed second is slower by that much, whoever it is. Interleaving puts both sides in
// the same state:
//   1. solo calibration: the reference alone, with the full sampling policy (the per-call limit
//      and the drift baseline come from it; no candidate process is running yet);
//   2. pairs of blocks, one reference block and one candidate block of `block_samples` timed
//      calls each (after one untimed call that absorbs the switch between processes), the order
//      within each pair drawn from the evaluation's secret, so the candidate cannot know whether
//      the next request opens a pair; while the reference runs, the candidate's processes are
//      frozen (its cgroup's cgroup.freeze), so they cannot load the GPU against it;
//   3. pairs continue until both sides' sampling decisions (timing_stats.h) say stop;
//   4. a reference block whose median is more than `drift_limit` (2 %) slower than the solo
//      calibration voids the evaluation: the reference is the yardstick, and something slowed
//      it, which would inflate the candidate's speedup. A block more than 2 % faster is flagged
//      (`reference_faster_than_solo`), not voided: it can only understate the candidate, and
//      power-capped tasks show it with legitimate candidates (the H200's backward pass at
//      1815-1935 MHz under sw_power_cap: a reference block 2.8 % faster than its solo
//      calibration next to the expert solution, 2026-12-02).
// The supervisor reads the SM clock and the clock-event (throttle) reasons through NVML around
// every block (device-wide; never the runner's readings, which the candidate controls).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

enum class TimedSide { kReference, kCandidate };

std::string_view timed_side_name(TimedSide side);

// The order of the next pair of blocks, drawn from `rng` (the evaluation's secret stream).
std::vector<TimedSide> next_pair_order(std::mt19937_64& rng);

// One block as the trace records it.
struct TimingBlock {
  TimedSide side = TimedSide::kReference;
  int first_sample = 0;  // index of its first sample among its side's samples
  int samples = 0;
  double median_ms = 0;
  // Supervisor NVML before and after the block (0: unreadable).
  std::uint32_t sm_clock_mhz_before = 0, sm_clock_mhz_after = 0;
  std::vector<std::string> clock_event_reasons;  // the union of both readings
  std::optional<double> drift;                   // reference blocks: median / solo median − 1

  Json to_json() const;
  static Result<TimingBlock> from_json(const Json& json);
};

// workloads[].timing_interleave in the trace.
struct InterleaveRecord {
  int block_samples = 0;
  double drift_limit = 0;
  double reference_solo_median_ms = 0;
  double max_abs_drift = 0;      // over the reference blocks
  std::string candidate_freeze;  // "cgroup" or why not ("no cgroup: process-group fallback", ...)
  std::uint32_t sm_clock_mhz_min = 0, sm_clock_mhz_max = 0;  // over all blocks' readings
  // Blocks whose readings differ by more than kClockSpreadMhz: the sides may still have seen
  // different clocks within a pair; marked, not voided.
  bool clock_spread = false;
  std::vector<TimingBlock> blocks;

  Json to_json() const;
  static Result<InterleaveRecord> from_json(const Json& json);
};

// The spread of SM clocks across an evaluation's blocks above which the record is marked.
inline constexpr std::uint32_t kClockSpreadMhz = 90;

// median / solo − 1 of a reference block.
double reference_drift(double block_median_ms, double solo_median_ms);

// Adds `block` to `record`: its drift (reference blocks), the clock range, the spread flag.
void add_block(InterleaveRecord& record, TimingBlock block);

// Whether a reference block ran more than the drift limit faster than the solo calibration.
bool reference_faster_than_solo(const InterleaveRecord& record);

// The finding text when a reference block ran slower than the solo calibration by more than the
// limit; nullopt otherwise (faster blocks are flagged, see reference_faster_than_solo).
std::optional<std::string> drift_violation(const TimingBlock& block, double solo_median_ms,
                                           double limit);

}  // namespace ptxb
