#include "eval/interleave.h"

#include <algorithm>
#include <cmath>

#include "core/json_fields.h"

namespace ptxb {

std::string_view timed_side_name(TimedSide side) {
  return side == TimedSide::kReference ? "reference" : "candidate";
}

std::vector<TimedSide> next_couple_order(std::mt19937_64& rng) {
  constexpr TimedSide R = TimedSide::kReference, C = TimedSide::kCandidate;
  if (rng() & 1) return {R, C, C, R};
  return {C, R, R, C};
}

double reference_drift(double block_median_ms, double solo_median_ms) {
  if (!(solo_median_ms > 0)) return 0;
  return block_median_ms / solo_median_ms - 1.0;
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Rule 4b over the reference blocks so far.
std::optional<double> after_candidate_slowdown(const std::vector<TimingBlock>& blocks) {
  std::vector<double> after, other;
  for (const TimingBlock& b : blocks)
    if (b.side == TimedSide::kReference && b.drift)
      (b.after_candidate ? after : other).push_back(1.0 + *b.drift);
  if (after.empty() || other.empty()) return std::nullopt;
  return median_of(after) / median_of(other) - 1.0;
}

}  // namespace

void add_block(InterleaveRecord& record, TimingBlock block) {
  if (block.side == TimedSide::kReference) {
    block.drift = reference_drift(block.median_ms, record.reference_solo_median_ms);
    record.max_abs_drift = std::max(record.max_abs_drift, std::abs(*block.drift));
  }
  for (std::uint32_t mhz : {block.sm_clock_mhz_before, block.sm_clock_mhz_after}) {
    if (mhz == 0) continue;
    record.sm_clock_mhz_min =
        record.sm_clock_mhz_min ? std::min(record.sm_clock_mhz_min, mhz) : mhz;
    record.sm_clock_mhz_max = std::max(record.sm_clock_mhz_max, mhz);
  }
  record.clock_spread = record.sm_clock_mhz_max - record.sm_clock_mhz_min > kClockSpreadMhz;
  record.blocks.push_back(std::move(block));
  record.after_candidate_slowdown = after_candidate_slowdown(record.blocks);
}

Result<std::vector<CoupleSamples>> couple_samples(const InterleaveRecord& record,
                                                  const std::vector<double>& reference_ns,
                                                  const std::vector<double>& candidate_ns) {
  const std::vector<TimingBlock>& blocks = record.blocks;
  if (blocks.empty() || blocks.size() % 4 != 0)
    return make_error("interleave", "{} timing blocks are not whole couples of four",
                      blocks.size());
  std::vector<CoupleSamples> couples(blocks.size() / 4);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const TimingBlock& b = blocks[i];
    const bool reference = b.side == TimedSide::kReference;
    const std::vector<double>& all = reference ? reference_ns : candidate_ns;
    if (b.first_sample < 0 || b.samples < 0 ||
        static_cast<std::size_t>(b.first_sample) + static_cast<std::size_t>(b.samples) > all.size())
      return make_error(
          "interleave", "timing block {} (samples {}-{}) lies outside the {}'s {} samples", i + 1,
          b.first_sample + 1, b.first_sample + b.samples, timed_side_name(b.side), all.size());
    std::vector<double>& mine =
        reference ? couples[i / 4].reference_ns : couples[i / 4].candidate_ns;
    mine.insert(mine.end(), all.begin() + b.first_sample, all.begin() + b.first_sample + b.samples);
  }
  for (std::size_t c = 0; c < couples.size(); ++c) {
    int refs = 0;
    for (std::size_t i = 4 * c; i < 4 * c + 4; ++i) refs += blocks[i].side == TimedSide::kReference;
    if (refs != 2)
      return make_error("interleave", "couple {} holds {} reference blocks, not 2", c + 1, refs);
  }
  return couples;
}

bool reference_faster_than_solo(const InterleaveRecord& record) {
  for (const TimingBlock& block : record.blocks)
    if (block.drift && *block.drift < -record.drift_limit) return true;
  return false;
}

std::optional<std::string> drift_violation(const InterleaveRecord& record) {
  if (record.blocks.empty()) return std::nullopt;
  const TimingBlock& block = record.blocks.back();
  if (block.side != TimedSide::kReference || !block.drift) return std::nullopt;
  if (*block.drift <= record.drift_limit) return std::nullopt;  // faster: flagged, never voided
  return fmt::format(
      "a reference block (samples {}-{}) took {:.4f} ms at SM clock {}-{} MHz, {:+.1f} % from "
      "the reference's solo calibration {:.4f} ms at {} MHz (limit {:.0f} %): the yardstick moved, "
      "so the evaluation is void; run it again",
      block.first_sample + 1, block.first_sample + block.samples, block.median_ms,
      block.sm_clock_mhz_before, block.sm_clock_mhz_after, *block.drift * 100,
      record.reference_solo_median_ms, record.reference_solo_sm_clock_mhz,
      record.drift_limit * 100);
}

std::optional<std::string> after_candidate_violation(const InterleaveRecord& record) {
  if (!record.after_candidate_slowdown || *record.after_candidate_slowdown <= record.drift_limit)
    return std::nullopt;
  return fmt::format(
      "the reference ran {:+.1f} % slower right after the candidate's blocks than after its own "
      "(median of each group; limit {:.0f} %): work left on the "
      "GPU by the candidate slowed the yardstick, so the evaluation is void",
      *record.after_candidate_slowdown * 100, record.drift_limit * 100);
}

Json TimingBlock::to_json() const {
  Json j{{"side", std::string(timed_side_name(side))},
         {"first_sample", first_sample},
         {"samples", samples},
         {"median_ms", median_ms},
         {"sm_clock_mhz_before", sm_clock_mhz_before},
         {"sm_clock_mhz_after", sm_clock_mhz_after},
         {"clock_event_reasons", clock_event_reasons},
         {"after_candidate", after_candidate}};
  j["drift"] = drift ? Json(*drift) : Json(nullptr);
  return j;
}

Result<TimingBlock> TimingBlock::from_json(const Json& json) {
  TimingBlock b;
  std::string side;
  FieldReader r(json);
  r.required("side", side).required("first_sample", b.first_sample);
  r.required("samples", b.samples).required("median_ms", b.median_ms);
  r.optional("sm_clock_mhz_before", b.sm_clock_mhz_before);
  r.optional("sm_clock_mhz_after", b.sm_clock_mhz_after);
  r.optional("clock_event_reasons", b.clock_event_reasons).optional("drift", b.drift);
  r.optional("after_candidate", b.after_candidate);
  PTXB_RETURN_IF_ERROR(r.status());
  if (side != "reference" && side != "candidate")
    return make_error("parse", "timing block: side \"{}\" is neither reference nor candidate",
                      side);
  b.side = side == "reference" ? TimedSide::kReference : TimedSide::kCandidate;
  return b;
}

Json InterleaveRecord::to_json() const {
  Json blocks_json = Json::array();
  for (const auto& b : blocks) blocks_json.push_back(b.to_json());
  Json j{{"block_samples", block_samples},
         {"drift_limit", drift_limit},
         {"reference_solo_median_ms", reference_solo_median_ms},
         {"reference_solo_sm_clock_mhz", reference_solo_sm_clock_mhz},
         {"max_abs_drift", max_abs_drift},
         {"candidate_freeze", candidate_freeze},
         {"sm_clock_mhz_min", sm_clock_mhz_min},
         {"sm_clock_mhz_max", sm_clock_mhz_max},
         {"clock_spread", clock_spread},
         {"blocks", blocks_json}};
  if (!voided_attempts.empty()) j["voided_attempts"] = voided_attempts;
  if (!couple_speedups.empty()) j["couple_speedups"] = couple_speedups;
  j["after_candidate_slowdown"] =
      after_candidate_slowdown ? Json(*after_candidate_slowdown) : Json(nullptr);
  return j;
}

Result<InterleaveRecord> InterleaveRecord::from_json(const Json& json) {
  InterleaveRecord rec;
  FieldReader r(json);
  r.required("block_samples", rec.block_samples).required("drift_limit", rec.drift_limit);
  r.required("reference_solo_median_ms", rec.reference_solo_median_ms);
  r.optional("reference_solo_sm_clock_mhz", rec.reference_solo_sm_clock_mhz);
  r.optional("after_candidate_slowdown", rec.after_candidate_slowdown);
  r.optional("voided_attempts", rec.voided_attempts);
  r.optional("couple_speedups", rec.couple_speedups);
  r.optional("max_abs_drift", rec.max_abs_drift).optional("candidate_freeze", rec.candidate_freeze);
  r.optional("sm_clock_mhz_min", rec.sm_clock_mhz_min);
  r.optional("sm_clock_mhz_max", rec.sm_clock_mhz_max).optional("clock_spread", rec.clock_spread);
  PTXB_RETURN_IF_ERROR(r.status());
  if (json.contains("blocks")) {
    if (!json["blocks"].is_array())
      return make_error("parse", "timing_interleave.blocks: not a list");
    for (const auto& b : json["blocks"]) {
      PTXB_ASSIGN_OR_RETURN(TimingBlock block, TimingBlock::from_json(b));
      rec.blocks.push_back(std::move(block));
    }
  }
  return rec;
}

}  // namespace ptxb
