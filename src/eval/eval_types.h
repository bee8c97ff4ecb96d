// The evaluation's request and result (design.md §2, §3.3–§3.6): plain serializable objects. The
// CLI, the supervisor process, the agent and (later) the remote service pass exactly these.
//
// An EvalRequest is what a client sends (source + task + options). The CLI compiles it, then
// hands the supervisor a SupervisorJob (the request plus the compile result and the paths of the
// trusted binaries); the supervisor answers with the GPU part of the EvalResult.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/debug_report.h"
#include "analysis/ncu_hints.h"
#include "analysis/ncu_source.h"
#include "analysis/sanitizer_report.h"
#include "compile/compile_types.h"
#include "core/json_io.h"
#include "core/result.h"
#include "eval/batch_bound.h"
#include "eval/device_facts.h"
#include "eval/energy.h"
#include "eval/eval_operation.h"
#include "eval/interleave.h"
#include "eval/paper_timing.h"
#include "eval/speedup_interval.h"
#include "eval/timing_stats.h"
#include "eval/work_done.h"
#include "trace/trace.h"

namespace ptxb {

struct EvalOptions {
  std::uint64_t seed = 1;  // base seed; per-trial seeds derive from it (recorded in the trace)
  bool sanitize = false;   // compute-sanitizer gate before the GPU stages
  std::string sanitizer_tool = "memcheck";  // memcheck | racecheck | synccheck | initcheck
  bool ncu = true;                          // dynamic target-instruction check
  int trials = 0;  // correctness trials; 0: the task's default (3 forward, 1 backward)
  TimingPolicy timing;
  // Test-only (A/A benchmark): the reference library runs in the candidate slot; the module
  // check is off for it, and the trace says so.
  bool reference_as_candidate = false;
  // Energy per call (eval/energy.h): a back-to-back phase of >= 1 s per side after interleaved
  // timing, read from NVML by the supervisor. Off by default: it adds about 3 s.
  bool energy = false;
  // cuBLASLt references: every runner (the reference's, and the candidate slot under
  // reference_as_candidate) uses the heuristic candidate the supervisor's own instance
  // autotuned (protocol/reference_selector.h) instead of autotuning again in its own process,
  // where candidates 0.5 % apart can be picked differently. On by default since the H200 A/A
  // of 2026-12-02 (GEMM, 10 seeds: max - min 2.39 % without, 0.99 % with; bench/results/aa.md).
  // A no-op for references other than cuBLASLt.
  bool pin_reference_algorithm = true;
  // A second library reference timed after a PASSED candidate, next to the task's primary one
  // (eval/also_reference.h): "" (none, the default) or "flashinfer" (the MHA forward tasks).
  // Its correctness, median and the candidate's speedup against it go to
  // workload.reference.also_reference; the verdict and `speedup` stay the primary's.
  std::string also_reference;
  // The debug stage (docs/eval.md "Debug stage"): on RUNTIME_ERROR, MEMORY_ERROR or TIMEOUT,
  // compute-sanitizer's most precise fault and cuda-gdb over a CUDA core dump, within
  // `debug_budget_seconds` per failing evaluation. Off by default (operation debug sets it).
  bool debug = false;
  double debug_budget_seconds = 30.0;
  // Profiler hints (eval/feedback.h): the profiled call also collects the metrics of
  // analysis/ncu_hints.h (kProfilerHintMetrics), kept in target_instructions.hint_metrics for the
  // feedback. Off by default and in the paper protocol: they add replay passes to ncu's run.
  bool profiler_hints = false;
  // The profile stage's method before 2026-12-03, for cross-checks: ncu's source page is
  // imported (not the per-address counters of the raw page) and every kernel of the call is
  // profiled (not only those whose SASS holds a target family). Same verdicts, about 1 s more.
  bool ncu_source_page = false;
  // --unsafe-no-sandbox: untrusted processes run without ptxbench-sandbox; the trace
  // (evaluation.ptxbench.sandboxed) and the feedback say so. Without it, a sandbox that cannot
  // be set up is INFRA_ERROR, never an unsandboxed run.
  bool unsafe_no_sandbox = false;  // recorded in the trace
  // Test-only (the adversarial suite, docs/integrity.md): forbidden headers and symbols are
  // recorded but do not stop the evaluation, so the run-time checks and the sandbox can be shown
  // to stop a candidate on their own. Never set for a real evaluation; the trace records it.
  bool disable_static_checks = false;
  double runner_start_timeout_seconds = 60.0;  // spawn → hello → load → bind
  double sanitizer_timeout_seconds = 300.0;    // memcheck slows kernels 10-100x
  double ncu_timeout_seconds = 120.0;

  Json to_json() const;
  static Result<EvalOptions> from_json(const Json& json);
};

// A kernel.so and its PTX built elsewhere (the compile split, docs/service.md): files on this
// host, each with the SHA-256 it must have, and the nvcc version that built them.
struct PrebuiltFiles {
  std::string shared_object_path, shared_object_sha256;
  std::string ptx_path, ptx_sha256;
  std::string nvcc_version;

  Json to_json() const;
  static Result<PrebuiltFiles> from_json(const Json& json);
};

struct EvalRequest {
  // Which stages run (eval/eval_operation.h); `options` already carry what it implies
  // (apply_operation). Absent from the JSON for evaluate, so existing requests keep their
  // idempotency keys (service/service_client.h request_key).
  EvalOperation operation = EvalOperation::kEvaluate;
  std::string task;
  std::string arch;  // empty: the task's
  std::string source_name = "kernel.cu";
  std::string source;
  EvalOptions options;
  // Set: evaluate() checks the files' hashes and re-runs the binary's checks and analysis
  // (compile/compiler.h analyse_prebuilt) instead of compiling `source`, which stays the record.
  std::optional<PrebuiltFiles> prebuilt;

  Json to_json() const;
  static Result<EvalRequest> from_json(const Json& json);
};

// Output comparison of one output tensor in one trial (supervisor/device/compare.h, as
// JSON-friendly data).
struct OutputCheck {
  std::string output;
  int trial = 0;
  int set = 0;
  std::int64_t num_elements = 0;
  std::int64_t num_failing = 0;
  std::int64_t first_failing_index = -1;
  double first_failing_candidate = 0, first_failing_reference = 0;
  double max_abs_error = 0, max_rel_error = 0, matched_ratio = 1;
  std::int64_t num_nonfinite_candidate = 0, num_nonfinite_reference = 0;
  std::int64_t num_equal_poison = 0;
  // Elements that missed the library reference but met the rule against the exact-math
  // cross-check reference (attention backward only; docs/eval.md "Cross-checked reference").
  std::int64_t num_matched_cross_only = 0;

  bool passed() const { return num_failing == 0; }
  Json to_json() const;
  static Result<OutputCheck> from_json(const Json& json);
};

// A finding that decides a status by itself (integrity, forbidden module, runtime fault).
struct Finding {
  PtxbStatus status = PtxbStatus::kRewardHack;
  std::string reason;  // machine-readable: foreign_stream, out_of_window, runtime_module, ...
  std::string detail;  // one line for people and the model

  Json to_json() const;
  static Result<Finding> from_json(const Json& json);
};

// The optional second reference (EvalOptions::also_reference, eval/also_reference.h): checked
// against the task reference's outputs with the task tolerance, then timed alone with the same
// runner and sampling code as the primary reference's solo calibration.
struct AlsoReferenceRecord {
  std::string name;      // "flashinfer" (the option's value)
  std::string backend;   // "flashinfer_mha_prefill"
  std::string selector;  // what its runner loaded: "flashinfer_mha_prefill:causal"
  // "measured": correct and timed; "incorrect": outputs outside the tolerance, not timed;
  // "unavailable": the library refused the task (no kernel for its head dim, not built), `why`
  // has its message; "failed": its runner failed otherwise, `why` says how.
  std::string status;
  std::string why;
  Json backend_description = nullptr;  // its describe() as its runner printed it (the plan)
  std::vector<OutputCheck> checks;     // one call per correctness input set
  std::optional<TimingStats> timing;
  std::optional<double> speedup;           // its median / the candidate's median (candidate vs it)
  std::optional<std::string> measured_at;  // ISO 8601 UTC
  std::string method;

  Json to_json() const;
  static Result<AlsoReferenceRecord> from_json(const Json& json);
};

// How the library reference was set up and timed (WorkloadEval::reference).
struct ReferenceRecord {
  // The reference library's own description of its backend and of the forward pass that makes
  // a backward task's inputs (supervisor/device): free-form, for people; null when none.
  Json backend = nullptr;
  Json forward_for_inputs = nullptr;
  // Set once the reference was timed in this evaluation (absent for plain_cuda tasks).
  std::optional<std::string> measured_at;  // ISO 8601 UTC
  std::optional<std::string> method;       // how it was timed, in one sentence
  // What the library chose in the processes that timed it (each selects on its own, e.g.
  // cuBLASLt's autotuning; docs/references.md): the reference runner's description, and the
  // candidate slot's when the library runs there too (A/A). Read from the line the library
  // prints when it prepares (protocol/reference_selector.h kPreparedLinePrefix); null when none.
  Json timed_backend = nullptr;
  Json candidate_slot_backend = nullptr;
  // With EvalOptions::also_reference, after a PASSED candidate; absent otherwise.
  std::optional<AlsoReferenceRecord> also_reference;

  Json to_json() const;
  static Result<ReferenceRecord> from_json(const Json& json);
};

// The GPU-state guard's verdict (design.md §3.4): timing on a shared or throttled GPU is noisy.
struct GpuStateRecord {
  int before = -1;                          // compute processes before the evaluation (-1: unknown)
  std::optional<DeviceFacts> after_timing;  // the probe after timing, when it worked
  bool noisy = false;
  std::vector<std::string> why;

  Json to_json() const;
  static Result<GpuStateRecord> from_json(const Json& json);
};

// The candidate runner process as the model and a reader see it (WorkloadEval::runner). Each
// field is absent when the evaluation ended before it was known.
struct RunnerRecord {
  std::optional<std::string> log;  // its output, capped to the tail (the model sees it)
  std::optional<GpuStateRecord> gpu_state;
  std::optional<std::string> shutdown;  // why the orderly shutdown failed
  std::optional<std::string> exit;      // how the process ended (RunnerExit::describe)

  Json to_json() const;
  static Result<RunnerRecord> from_json(const Json& json);
};

// One anti-caching refresh: a timed call right after the set's inputs were rewritten in place.
struct RefreshRecord {
  int sample = 0;
  int set = 0;
  std::string kind;  // refresh_kind_name: "full" | "block"
  double device_ms = 0;

  Json to_json() const;
  static Result<RefreshRecord> from_json(const Json& json);
};

// The re-validation of a high speedup (docs/integrity.md).
struct RevalidationRecord {
  double speedup = 0;    // the speedup that triggered it
  double threshold = 0;  // TimingPolicy::revalidation_speedup
  int trials = 0;
  std::optional<std::vector<double>> device_ms;  // per fresh trial; absent when one failed
  std::optional<bool> passed;  // the fresh-input check's verdict; absent when a trial failed

  Json to_json() const;
  static Result<RevalidationRecord> from_json(const Json& json);
};

// The fresh-input tripwire's figures: calls on freshly rewritten inputs vs the repeated ones.
struct FreshInputRecord {
  std::optional<double> median_ms;  // of the fresh calls; null when there were none
  double slowdown_limit = 0;        // TimingPolicy::fresh_input_slowdown_limit
  double repeat_median_ms = 0;
};

// Anti-caching evidence (WorkloadEval::integrity). Each part is absent when the evaluation
// ended before that check ran.
struct IntegrityRecord {
  std::optional<std::vector<RefreshRecord>> refreshes;
  std::optional<RevalidationRecord> revalidation;
  std::optional<FreshInputRecord> fresh_input;
  std::optional<BatchBoundRecord> batch_bound;
  std::optional<std::uint64_t> schedule_secret;  // drew the verified calls; recorded after

  Json to_json() const;
  static Result<IntegrityRecord> from_json(const Json& json);
};

struct WorkloadEval {
  std::string workload;  // Task::workload_name()
  std::string workload_uuid;
  PtxbStatus status = PtxbStatus::kInfraError;
  std::string reason;
  std::string message;
  std::uint64_t seed = 0;
  std::vector<std::uint64_t> set_seeds;
  int trials = 0;
  std::vector<OutputCheck> checks;
  std::vector<std::pair<std::string, std::int64_t>> unwritten;  // output -> elements never written
  std::vector<Finding> findings;
  std::optional<TimingStats> candidate_timing;
  std::optional<TimingStats> reference_timing;
  std::optional<double> speedup;                    // reference median / candidate median
  std::optional<SpeedupInterval> speedup_interval;  // 95 % bootstrap (speedup_interval.h)
  // Interleaved timing (interleave.h): the reference's solo calibration (reference_timing is
  // then over its interleaved blocks) and the blocks; absent when timed sequentially.
  std::optional<TimingStats> reference_solo_timing;
  std::optional<InterleaveRecord> timing_interleave;
  std::optional<EnergyRecord> energy;  // with --energy
  // --timing-protocol paper: the reference implementation's recipe on both sides; `speedup` is
  // then its speedup (the medians above stay our method's).
  std::optional<PaperTimingRecord> paper_timing;
  double physical_floor_ms = 0;
  ReferenceRecord reference;  // backend description, when and how it was timed
  RunnerRecord runner;        // exit, logs (the model sees them as logs), GPU state
  // Anti-caching evidence: device times of the calls on freshly rewritten inputs and, when the
  // speedup exceeded the re-validation threshold, the extra fresh trials (docs/integrity.md).
  IntegrityRecord integrity;
  // Marks a consumer should see without parsing `integrity`: "revalidated_high_speedup".
  std::vector<std::string> flags;

  Json to_json() const;
  static Result<WorkloadEval> from_json(const Json& json);
};

// design.md §3.6 verdicts.
// The three dynamic ones are the ncu analysis's own (analysis/ncu_source.h).
inline constexpr std::string_view kInstNotRun = "not_run";
inline constexpr std::string_view kInstStaticAbsent = "static_absent";
inline constexpr std::string_view kInstDynamicNotExecuted = kDynamicNotExecuted;
inline constexpr std::string_view kInstDynamicPresent = kDynamicPresent;
inline constexpr std::string_view kInstUnknown = kDynamicUnknown;

// The call Nsight Compute profiled (design.md §3.6): one call of a second IPC runner, chosen at
// random after the warm-up, and how it compares with the timed calls.
struct ProfiledCallRecord {
  int call = 0;   // 1-based number of the profiled call in that runner's call sequence
  int calls = 0;  // calls made in all (warm-up included)
  int warmup_calls = 0;
  std::int64_t launch_skip = 0;  // ncu --launch-skip: matching launches before the call's first
  int kernels = 0;               // kernels per call (the timed calls'; ncu --launch-count)
  // "call": every kernel of the call was profiled; "target_kernels": only the kernels whose
  // SASS holds a target family (supervisor/profile_plan.h focus_plan), and timed_median_ms is
  // then those kernels' mean CUPTI time per timed call; "target_kernels_in_call": the same
  // kernels judged within their call (supervisor/profile_check.h compare_focused_call).
  std::string scope = "call";
  double gpu_time_ms = 0;              // sum of gpu__time_duration over the profiled kernels
  double timed_median_ms = 0;          // the candidate's timed median (scope "call")
  double ratio = 0;                    // gpu_time_ms / timed_median_ms
  double band_low = 0, band_high = 0;  // the accepted ratio band
  bool matches = false;                // same kernels, same shapes, ratio inside the band
  std::string mismatch;                // why not, when !matches

  Json to_json() const;
  static Result<ProfiledCallRecord> from_json(const Json& json);
};

struct TargetInstructionCheck {
  std::string verdict = std::string(kInstNotRun);
  std::string reason;                                 // for not_run / unknown: why
  std::map<std::string, std::int64_t> static_counts;  // family -> SASS lines
  std::optional<DynamicCheck> dynamic;  // the ncu analysis, when Nsight Compute ran and parsed
  double cost_ms = 0;                   // wall time of the profiler run
  // Where cost_ms went (supervisor/profile_session.h names the phases); empty when not run.
  std::map<std::string, double> phases_ms;
  std::optional<ProfiledCallRecord> profiled_call;  // when the profiled call was read
  // The work-done check of the profiled call (eval/work_done.h); absent when not judged, with
  // why in work_done_note.
  std::optional<WorkDoneRecord> work_done;
  std::string work_done_note;
  // Where the per-instruction counts came from: "raw_page" (per-address counters mapped onto
  // the cubin's listing) or "source_page (why)"; empty without source counters.
  std::string counts_from;
  // Set when only the target kernels were profiled first and their work fell short, so the call
  // was profiled again whole (supervisor/stage_profile.cc); cost_ms holds both runs.
  std::string focus_note;
  // The profiled call's launches with the profiler hints' metrics (EvalOptions::profiler_hints).
  std::vector<NcuLaunchMetrics> hint_metrics;

  Json to_json() const;
  static Result<TargetInstructionCheck> from_json(const Json& json);
};

// compute-sanitizer's findings as recorded: the parsed report and the summary the model read.
struct SanitizerRecord {
  SanitizerReport report;
  std::string summary;

  Json to_json() const;  // the report's fields and "summary"
  static Result<SanitizerRecord> from_json(const Json& json);
};

// The runner's answer to hello: the CUDA stack the candidate ran on.
struct RunnerInfo {
  std::string device_name;
  int cuda_runtime_version = 0;
  int cuda_driver_version = 0;
  std::uint32_t cupti_version = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t l2_flush_bytes = 0;

  Json to_json() const;
  static Result<RunnerInfo> from_json(const Json& json);
};

// Where an evaluation ran (EvalResult::environment). In JSON one flat object: the GPU's facts
// at its top level, then the named parts. Each part is absent when the evaluation ended first.
struct EnvironmentRecord {
  std::optional<DeviceFacts> gpu;  // the probe at the start
  std::optional<std::string> gpu_name;
  // The sandbox's self-description (supervisor/eval_sandbox.h): its policy and the kernel's
  // report of it, for people auditing a run; free-form.
  std::optional<Json> sandbox;
  std::optional<RunnerInfo> runner;
  // Added by the CLI around the supervisor process (eval/eval_pipeline.cc): its stderr, the tool
  // paths and the GPU probe, all descriptive.
  std::optional<std::string> supervisor_log;
  std::optional<Json> tools;
  std::optional<Json> gpu_probe;

  Json to_json() const;
  static Result<EnvironmentRecord> from_json(const Json& json);
};

struct EvalResult {
  std::string task;
  std::string arch;
  PtxbStatus status = PtxbStatus::kInfraError;  // the worst stage's verdict
  std::string reason;
  std::string message;
  std::optional<CompileResult> compile;  // absent in the supervisor's answer (the CLI owns it)
  bool gpu_skipped = false;
  std::string gpu_skip_reason;
  std::vector<WorkloadEval> workloads;
  TargetInstructionCheck target_instructions;
  // When compute-sanitizer ran: the --sanitize gate (clean or not), or the memcheck pass that
  // located a memory fault (only when it found one).
  std::optional<SanitizerRecord> sanitizer;
  // The debug stage's report, when it ran (EvalOptions::debug and a failing status).
  std::optional<DebugRecord> debug;
  EnvironmentRecord environment;
  std::vector<std::pair<std::string, double>> stage_ms;
  EvalOptions options;
  std::string harness_version;
  std::string timestamp;  // ISO 8601 UTC, when the evaluation started

  Json to_json() const;
  static Result<EvalResult> from_json(const Json& json);
  // One FlashInfer-Trace trace per workload (design.md §3.1), with the evaluation.ptxbench
  // extension carrying the finer status and everything else above. `workload` is the task's
  // FlashInfer-Trace workload object (workload_to_json).
  std::vector<Trace> traces(const std::string& definition, const Json& workload,
                            const std::string& solution) const;
};

// What the CLI hands the trusted GPU supervisor process.
struct SupervisorJob {
  EvalRequest request;
  CompileResult compile;                // status OK
  std::vector<std::string> tasks_dirs;  // extra task folders (--tasks-dir); built-in always
  std::string runner_path;              // ptxbench-runner
  std::string reference_library_path;   // libptxbench_reference.so
  std::string ncu_path;                 // "" = not available
  std::string sanitizer_path;           // "" = not available
  std::string cuda_gdb_path;            // "" = not available (the debug stage says so)
  std::string sandbox_path;             // ptxbench-sandbox; "" = not found
  std::string profile_save_dir;         // "" = keep nothing (EvalTools::profile_save_dir)

  Json to_json() const;
  static Result<SupervisorJob> from_json(const Json& json);
};

// Seed of correctness set `index` for a task: a pure function, recorded in the trace.
std::uint64_t derive_set_seed(std::uint64_t base_seed, const std::string& task, int index);

}  // namespace ptxb
