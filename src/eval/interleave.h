// Interleaved timing (timing fidelity): the arithmetic and the record, pure C++; the GPU loop is
// supervisor/stage_interleave.cc.
//
// Timed one after the other, the reference and the candidate see different clocks: on the H200
// a sustained backward pass drifts from 1980 to 1770-1860 MHz within seconds (sw_power_cap), so
// the side timed second is slower by that much, whoever it is. Interleaving puts both sides in
// the same state:
//   1. solo calibration: the reference alone, with the full sampling policy (the per-call limit
//      and the drift baseline come from it; no candidate process is running yet); the
//      supervisor reads the SM clock right after it;
//   2. couples of blocks, each block `block_samples` timed calls of one side (after one untimed
//      call that absorbs the switch between processes), in the mirrored orders R C C R or
//      C R R C, drawn per couple from the evaluation's secret. The mirror cancels a linear drift
//      within the couple exactly: with random pair orders (R C or C R), 5 pairs on a GEMM whose
//      clock fell 1980 -> 1755 MHz during the evaluation gave A/A ratios of 0.977-1.024 (seeds
//      4-10, 2026-12-02), because the side that happened to go first more often ran faster.
//      While the reference runs, the candidate's processes are frozen (its cgroup's
//      cgroup.freeze), so they cannot load the GPU against it;
//   3. couples continue until both sides' sampling decisions (timing_stats.h) say stop;
//   4. the yardstick must not move, checked two ways, each against `drift_limit` (2 %):
//      a. against the solo calibration: a block's drift is median / solo median - 1. Slower
//         beyond the limit voids (something took the GPU from the reference: that would inflate
//         the candidate's speedup); faster is flagged (`reference_faster_than_solo`), it can
//         only understate the candidate. Not scaled by the SM clock: NVML's readings around a
//         block are instants, and under the power cap the clock moves within a block; scaled,
//         the backward pass's A/A drifts reached 4.4 % against 1.6 % raw, and the GEMM's
//         13 % against 0.7 % (2026-12-02). On a GPU already hot from other work, the raw rule
//         voided 4 of 10 A/A evaluations of the backward pass (clock down to 1785 MHz after a
//         calibration near 1980): a void is an INFRA_ERROR, to run again;
//      b. against itself in the same thermal state: the reference blocks that follow a
//         candidate block against those that do not (the median of each group's drift). Work
//         the candidate leaves queued on the GPU when it is frozen runs into the next reference
//         block; more than the limit slower after the candidate voids.
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
#include "eval/speedup_interval.h"

namespace ptxb {

enum class TimedSide { kReference, kCandidate };

std::string_view timed_side_name(TimedSide side);

// The order of the next couple of blocks, R C C R or C R R C, drawn from `rng` (the evaluation's
// secret stream).
std::vector<TimedSide> next_couple_order(std::mt19937_64& rng);

// One block as the trace records it.
struct TimingBlock {
  TimedSide side = TimedSide::kReference;
  int first_sample = 0;  // index of its first sample among its side's samples
  int samples = 0;
  double median_ms = 0;
  // Supervisor NVML before and after the block (0: unreadable).
  std::uint32_t sm_clock_mhz_before = 0, sm_clock_mhz_after = 0;
  std::vector<std::string> clock_event_reasons;  // the union of both readings
  bool after_candidate = false;  // the block before it (or the warm-up) was the candidate's
  std::optional<double> drift;   // reference blocks: median / solo median − 1 (rule 4a)

  Json to_json() const;
  static Result<TimingBlock> from_json(const Json& json);
};

// workloads[].timing_interleave in the trace.
struct InterleaveRecord {
  int block_samples = 0;
  double drift_limit = 0;
  double reference_solo_median_ms = 0;
  std::uint32_t reference_solo_sm_clock_mhz = 0;  // NVML right after the calibration (0: none)
  double max_abs_drift = 0;                       // over the reference blocks
  // Rule 4b: median drift of the reference blocks after a candidate block over that of the
  // others, − 1; absent until both groups have a block.
  std::optional<double> after_candidate_slowdown;
  std::string candidate_freeze;  // "cgroup" or why not ("no cgroup: process-group fallback", ...)
  std::uint32_t sm_clock_mhz_min = 0, sm_clock_mhz_max = 0;  // over all blocks' readings
  // Blocks whose readings differ by more than kClockSpreadMhz: the sides may still have seen
  // different clocks within a pair; marked, not voided.
  bool clock_spread = false;
  std::vector<TimingBlock> blocks;
  // Reference median / candidate median within each couple, in order; the speedup is their
  // median (eval/speedup_interval.h). Filled when the speedup is computed.
  std::vector<double> couple_speedups;
  // Why earlier attempts were void (the reference recalibrated before each retry; the blocks
  // above are the last attempt's).
  std::vector<std::string> voided_attempts;

  Json to_json() const;
  static Result<InterleaveRecord> from_json(const Json& json);
};

// The spread of SM clocks across an evaluation's blocks above which the record is marked.
inline constexpr std::uint32_t kClockSpreadMhz = 90;

// The record's blocks in couples of four, in order, each side's samples of the couple taken from
// that side's timed samples (TimingBlock::first_sample / samples index them). Fails when the
// blocks are not whole couples of two blocks per side, or a block's samples lie outside its
// side's list.
Result<std::vector<CoupleSamples>> couple_samples(const InterleaveRecord& record,
                                                  const std::vector<double>& reference_ns,
                                                  const std::vector<double>& candidate_ns);

// Rule 4a: median / solo median − 1 of a reference block.
double reference_drift(double block_median_ms, double solo_median_ms);

// Adds `block` to `record`: its drifts (reference blocks), the clock range, the spread flag, the
// after-candidate slowdown (rule 4b).
void add_block(InterleaveRecord& record, TimingBlock block);

// Whether a reference block ran more than the drift limit faster than the solo calibration.
bool reference_faster_than_solo(const InterleaveRecord& record);

// The finding text when the record's last block is a reference block slower than the solo
// calibration by more than the limit (rule 4a); nullopt otherwise (faster blocks are flagged,
// see reference_faster_than_solo).
std::optional<std::string> drift_violation(const InterleaveRecord& record);

// The finding text when the reference ran more than the limit slower right after the candidate
// than elsewhere (rule 4b); nullopt otherwise.
std::optional<std::string> after_candidate_violation(const InterleaveRecord& record);

}  // namespace ptxb
