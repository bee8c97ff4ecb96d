// The energy phase (eval/energy.h): joules per call for the reference and the candidate.
#include <thread>

#include "eval/energy.h"
#include "supervisor/candidate_freeze.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// Four or five counter changes at ~100 ms: the idle power between the first and the last.
constexpr double kIdleSeconds = 0.45;
// The H200's counter moves every ~100 ms (measured 2026-12-02): 1.2 s gives about ten changes,
// and the window between the first and the last is at least a second.
constexpr double kActiveSeconds = 1.2;

double now_ms(EvalClock::time_point origin) {
  return std::chrono::duration<double, std::milli>(EvalClock::now() - origin).count();
}

// Polls the counter every millisecond for kIdleSeconds with nothing running.
Result<std::vector<EnergyPoll>> idle_polls(EvalContext& ctx) {
  std::vector<EnergyPoll> polls;
  const auto origin = EvalClock::now();
  while (now_ms(origin) < kIdleSeconds * 1000) {
    PTXB_ASSIGN_OR_RETURN(std::uint64_t mj, ctx.device.energy_mj());
    polls.push_back({now_ms(origin), mj, 0});
    std::this_thread::sleep_for(milliseconds(1));
  }
  return polls;
}

// One side: idle power, then its batches back to back for >= kActiveSeconds.
Result<EnergySide> measure_side(EvalContext& ctx, RunnerSide& side, bool candidate,
                                std::optional<double>& period) {
  CandidateFrozen frozen(ctx.candidate.cgroup_dir);
  if (!candidate) PTXB_RETURN_IF_ERROR(frozen.freeze());
  PTXB_ASSIGN_OR_RETURN(auto idle_readings, idle_polls(ctx));
  if (!period) period = counter_period_ms(idle_readings);
  const auto idle = watts_between_changes(idle_readings);
  if (!idle) return make_error("energy", "the energy counter did not change while idle");
  BatchRequest request;
  for (int s = 0; s < ctx.batch_sets; ++s)
    request.sets.push_back(static_cast<std::uint64_t>(ctx.num_sets + s));
  EnergySide out;
  out.idle_watts = *idle;
  // Back to back, the counter read after every batch; the window is cut between its changes.
  std::vector<EnergyPoll> polls;
  std::uint64_t calls = 0;
  const auto start = EvalClock::now();
  PTXB_ASSIGN_OR_RETURN(std::uint64_t first_mj, ctx.device.energy_mj());
  polls.push_back({0, first_mj, 0});
  while (now_ms(start) < kActiveSeconds * 1000) {
    auto reply = side.session->batch(request, milliseconds(60'000));
    if (!reply.ok()) return make_error("energy", "{} batch: {}", side.role, reply.error().message);
    if (reply->cuda_error)
      return make_error("energy", "{} batch: {}", side.role, reply->cuda_error->name);
    calls += reply->calls;
    PTXB_ASSIGN_OR_RETURN(std::uint64_t mj, ctx.device.energy_mj());
    polls.push_back({now_ms(start), mj, calls});
  }
  if (!energy_between_changes(polls, out))
    return make_error("energy", "{}: the energy counter changed fewer than twice in {} s",
                      side.role, kActiveSeconds);
  return out;
}

}  // namespace

EnergyRecord measure_energy(EvalContext& ctx) {
  EnergyRecord rec;
  if (ctx.batch_sets == 0) {
    rec.note = "no batch sets (no library reference): nothing to run back to back";
    return rec;
  }
  const auto start = EvalClock::now();
  auto reference = measure_side(ctx, ctx.reference, false, rec.counter_period_ms);
  auto candidate = measure_side(ctx, ctx.candidate, true, rec.counter_period_ms);
  if (reference.ok()) rec.reference = *reference;
  if (candidate.ok()) rec.candidate = *candidate;
  if (!reference.ok()) rec.note = "reference: " + reference.error().message;
  if (!candidate.ok())
    rec.note += (rec.note.empty() ? "" : "; ") + ("candidate: " + candidate.error().message);
  if (rec.reference && rec.candidate && rec.reference->joules_per_call > 0)
    rec.ratio = rec.candidate->joules_per_call / rec.reference->joules_per_call;
  ctx.stage_done("energy", start);
  return rec;
}

}  // namespace ptxb
