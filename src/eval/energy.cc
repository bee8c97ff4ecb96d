#include "eval/energy.h"

#include <algorithm>

#include "core/json_fields.h"

namespace ptxb {
namespace {

// The times at which the counter took a new value (the first poll's value is not a change).
std::vector<EnergyPoll> changes(const std::vector<EnergyPoll>& polls) {
  std::vector<EnergyPoll> out;
  for (std::size_t i = 1; i < polls.size(); ++i)
    if (polls[i].mj != polls[i - 1].mj) out.push_back(polls[i]);
  return out;
}

}  // namespace

double net_joules_per_call(double joules, double idle_watts, double seconds, std::uint64_t calls) {
  if (calls == 0) return 0;
  return (joules - idle_watts * seconds) / static_cast<double>(calls);
}

std::optional<double> counter_period_ms(const std::vector<EnergyPoll>& polls) {
  const auto c = changes(polls);
  if (c.size() < 2) return std::nullopt;
  std::vector<double> gaps;
  for (std::size_t i = 1; i < c.size(); ++i) gaps.push_back(c[i].ms - c[i - 1].ms);
  std::sort(gaps.begin(), gaps.end());
  const std::size_t n = gaps.size();
  return n % 2 ? gaps[n / 2] : (gaps[n / 2 - 1] + gaps[n / 2]) / 2;
}

std::optional<double> watts_between_changes(const std::vector<EnergyPoll>& polls) {
  const auto c = changes(polls);
  if (c.size() < 2 || !(c.back().ms > c.front().ms)) return std::nullopt;
  const double mj = static_cast<double>(c.back().mj - c.front().mj);
  return mj / (c.back().ms - c.front().ms);  // mJ/ms = W
}

bool energy_between_changes(const std::vector<EnergyPoll>& polls, EnergySide& side) {
  const auto c = changes(polls);
  if (c.size() < 2 || c.back().calls <= c.front().calls || !(c.back().ms > c.front().ms))
    return false;
  side.calls = c.back().calls - c.front().calls;
  side.seconds = (c.back().ms - c.front().ms) / 1000;
  side.joules = static_cast<double>(c.back().mj - c.front().mj) / 1000;
  side.joules_per_call =
      net_joules_per_call(side.joules, side.idle_watts, side.seconds, side.calls);
  return true;
}

Json EnergySide::to_json() const {
  return Json{{"calls", calls},
              {"seconds", seconds},
              {"joules", joules},
              {"idle_watts", idle_watts},
              {"joules_per_call", joules_per_call}};
}

Result<EnergySide> EnergySide::from_json(const Json& json) {
  EnergySide s;
  FieldReader r(json);
  r.required("calls", s.calls).required("seconds", s.seconds).required("joules", s.joules);
  r.required("idle_watts", s.idle_watts).required("joules_per_call", s.joules_per_call);
  PTXB_RETURN_IF_ERROR(r.status());
  return s;
}

Json EnergyRecord::to_json() const {
  Json j{{"note", note}};
  j["counter_period_ms"] = counter_period_ms ? Json(*counter_period_ms) : Json(nullptr);
  j["reference"] = reference ? reference->to_json() : Json(nullptr);
  j["candidate"] = candidate ? candidate->to_json() : Json(nullptr);
  j["ratio"] = ratio ? Json(*ratio) : Json(nullptr);
  return j;
}

Result<EnergyRecord> EnergyRecord::from_json(const Json& json) {
  EnergyRecord e;
  FieldReader r(json);
  r.optional("note", e.note).optional("counter_period_ms", e.counter_period_ms);
  r.optional("reference", e.reference).optional("candidate", e.candidate);
  r.optional("ratio", e.ratio);
  PTXB_RETURN_IF_ERROR(r.status());
  return e;
}

}  // namespace ptxb
