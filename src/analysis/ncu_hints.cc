#include "analysis/ncu_hints.h"

#include <algorithm>
#include <optional>

#include "core/strings.h"
#include "core/symbol_names.h"

namespace ptxb {
namespace {

constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";

// Thresholds of the sentences, each with its reason.
// A unit at ≥ 60 % of its peak is the one to relieve; below 40 % on both neither is the limit
// and the kernel waits on latency (Nsight Compute's own SOL rule of thumb).
constexpr double kBusyPct = 60, kIdlePct = 40;
// Bank conflicts below 5 % of shared wavefronts cost less than the noise of a timing.
constexpr double kConflictShare = 0.05;
// A stall reason is named when it holds at least 10 % of the stall cycles.
constexpr double kStallShare = 0.10;

std::optional<double> metric_of(const NcuLaunchMetrics& launch, std::string_view name) {
  auto it = launch.values.find(std::string(name));
  if (it == launch.values.end()) return std::nullopt;
  return it->second;
}

std::string pct_text(double value) {
  return fmt::format("{:.0f} %", value);
}

std::string bytes_text(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.0f} KB", bytes / 1e3);
}

// What a stall reason means for a kernel author, per Nsight Compute's WarpStateStats guide.
std::string stall_advice(const std::string& reason) {
  static const std::map<std::string, std::string> kAdvice = {
      {"long_scoreboard",
       "waiting on global or local memory: load further ahead (more pipeline "
       "stages, TMA) or remove spills"},
      {"mio_throttle",
       "the shared-memory and special-function instruction queue is full: fewer, "
       "wider shared-memory accesses (ldmatrix, 16-byte vectors)"},
      {"short_scoreboard",
       "waiting on shared-memory or MUFU results: interleave independent work "
       "between the load and its use"},
      {"barrier",
       "warps wait at block barriers: uneven work between warps, or more "
       "__syncthreads than the pipeline needs"},
      {"membar", "memory fences: drop fences that order nothing, use the narrowest scope"},
      {"math_pipe_throttle",
       "a math pipe is saturated: move work to another pipe or to the "
       "tensor cores"},
      {"lg_throttle", "too many global load/store instructions: vectorize them or use TMA"},
      {"wait", "fixed-latency dependencies: more independent instructions between dependent ones"},
      {"sleeping",
       "warps sleep in mbarrier waits: the stage they wait for arrives late, so the "
       "producer side is the bottleneck"},
      {"no_instruction", "instruction fetch misses: the hot loop is too large (over-unrolled)"},
      {"branch_resolving", "branch resolution: fewer divergent branches in the hot loop"},
      {"dispatch_stall", "the dispatcher stalled: often a pipe conflict"},
      {"tex_throttle", "the texture/L1 queue is full"},
      {"drain", "stores draining at exit"},
      {"imc_miss", "immediate-constant cache misses"},
      {"misc", "miscellaneous reasons"},
  };
  auto it = kAdvice.find(reason);
  return it == kAdvice.end() ? "" : it->second;
}

std::string reason_words(std::string reason) {
  if (reason == "mio_throttle") return "MIO throttle";
  if (reason == "lg_throttle") return "LG throttle";
  if (reason == "imc_miss") return "IMC miss";
  return replace_all(reason, "_", " ");
}

std::optional<std::string> speed_of_light(const NcuLaunchMetrics& launch) {
  auto sm = metric_of(launch, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  auto memory =
      metric_of(launch, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  if (!sm || !memory) return std::nullopt;
  std::string facts =
      fmt::format("Compute (SM) throughput is {} of peak and memory throughput {} of peak",
                  pct_text(*sm), pct_text(*memory));
  if (*memory >= kBusyPct && *memory > *sm)
    return facts +
           ": the kernel is memory-bound; cut the bytes moved (reuse tiles in shared "
           "memory, TMA multicast across a cluster) before tuning the math.";
  if (*sm >= kBusyPct && *sm >= *memory)
    return facts +
           ": the kernel is compute-bound; the gains left are in the tensor-core issue "
           "rate (larger wgmma N, fewer non-MMA instructions in the main loop).";
  if (*sm < kIdlePct && *memory < kIdlePct)
    return facts +
           ": neither is near its peak, so the kernel waits on latency; keep more work "
           "in flight (deeper pipeline, overlap of loads, MMAs and the epilogue).";
  // Between the two thresholds: one unit is busy but not the limit; the stalls below say what
  // holds the warps back.
  return facts +
         ": neither unit is the limit yet; what holds the warps back is in the stall reasons "
         "(overlap the softmax or epilogue with the MMAs, fewer barriers per tile).";
}

std::optional<std::string> warp_stalls(const NcuLaunchMetrics& launch) {
  std::vector<std::pair<double, std::string>> stalls;
  double total = 0;
  for (const auto& [name, value] : launch.values) {
    if (!starts_with(name, kStallPrefix) || !ends_with(name, kStallSuffix)) continue;
    std::string reason =
        name.substr(kStallPrefix.size(), name.size() - kStallPrefix.size() - kStallSuffix.size());
    // "selected" is the cycle a warp issues, not a stall; "not_selected" means another warp
    // issued, which is not a cost either.
    if (reason == "selected" || reason == "not_selected" || value <= 0) continue;
    stalls.emplace_back(value, reason);
    total += value;
  }
  if (stalls.empty() || total <= 0) return std::nullopt;
  std::sort(stalls.begin(), stalls.end(), std::greater<>());
  const auto& [top_value, top] = stalls.front();
  std::string sentence = fmt::format("{} of warp stall cycles are {}",
                                     pct_text(100 * top_value / total), reason_words(top));
  if (stalls.size() > 1 && stalls[1].first / total >= kStallShare)
    sentence += fmt::format(" (then {} {})", reason_words(stalls[1].second),
                            pct_text(100 * stalls[1].first / total));
  std::string advice = stall_advice(top);
  return sentence + (advice.empty() ? "." : ": " + advice + ".");
}

std::optional<std::string> bank_conflicts(const NcuLaunchMetrics& launch) {
  std::string sentence;
  for (const char* op : {"ld", "st"}) {
    auto conflicts = metric_of(
        launch, fmt::format("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{}.sum", op));
    auto wavefronts =
        metric_of(launch, fmt::format("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{}.sum", op));
    if (!conflicts || !wavefronts || *wavefronts <= 0) continue;
    double share = *conflicts / *wavefronts;
    if (share < kConflictShare) continue;
    sentence +=
        fmt::format("{}{} of shared-memory {} wavefronts are bank conflicts ({:.0f} of {:.0f})",
                    sentence.empty() ? "" : "; ", pct_text(100 * share),
                    op == std::string("ld") ? "load" : "store", *conflicts, *wavefronts);
  }
  if (sentence.empty()) return std::nullopt;
  return sentence +
         ": swizzle or pad the shared-memory layout so that the 32 lanes of a warp hit "
         "distinct banks.";
}

std::optional<std::string> occupancy(const NcuLaunchMetrics& launch) {
  auto achieved = metric_of(launch, "sm__warps_active.avg.pct_of_peak_sustained_active");
  if (!achieved) return std::nullopt;
  std::string sentence = "Achieved occupancy is " + pct_text(*achieved) + " of the SM's warps";
  if (auto theoretical = metric_of(launch, "sm__maximum_warps_per_active_cycle_pct"))
    sentence += " (theoretical " + pct_text(*theoretical) + ")";
  // The limiter is the resource allowing the fewest blocks per SM.
  std::optional<std::pair<double, std::string>> limiter;
  for (const auto& [metric, words] : std::vector<std::pair<std::string, std::string>>{
           {"launch__occupancy_limit_registers", "registers"},
           {"launch__occupancy_limit_shared_mem", "shared memory"},
           {"launch__occupancy_limit_warps", "warps per SM"},
           {"launch__occupancy_limit_blocks", "blocks per SM"}}) {
    auto blocks = metric_of(launch, metric);
    if (blocks && (!limiter || *blocks < limiter->first)) limiter = {{*blocks, words}};
  }
  if (limiter) {
    sentence += fmt::format(", limited by {} to {:.0f} block{} per SM", limiter->second,
                            limiter->first, limiter->first == 1 ? "" : "s");
    auto registers = metric_of(launch, "launch__registers_per_thread");
    if (limiter->second == "registers" && registers)
      sentence += fmt::format(" ({:.0f} registers per thread)", *registers);
  }
  return sentence + ".";
}

std::optional<std::string> memory_traffic(const NcuLaunchMetrics& launch) {
  auto read = metric_of(launch, "dram__bytes_read.sum");
  auto written = metric_of(launch, "dram__bytes_write.sum");
  if (!read || !written) return std::nullopt;
  std::string sentence = fmt::format("DRAM traffic is {} read and {} written", bytes_text(*read),
                                     bytes_text(*written));
  if (auto hit = metric_of(launch, "lts__t_sector_hit_rate.pct"))
    sentence += " with an L2 hit rate of " + pct_text(*hit);
  return sentence + ".";
}

}  // namespace

std::vector<NcuLaunchMetrics> hint_metrics_of(const std::vector<NcuLaunch>& launches) {
  std::vector<NcuLaunchMetrics> out;
  for (const NcuLaunch& launch : launches) {
    NcuLaunchMetrics m{launch.name, launch.metrics};
    m.values[std::string(kNcuGpuTimeMetric)] = launch.gpu_time_ns;
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::string> profiler_hint_sentences(const std::vector<NcuLaunchMetrics>& launches,
                                                 const std::vector<KernelSpills>& spills,
                                                 std::size_t max_sentences) {
  std::vector<std::string> sentences;
  for (const KernelSpills& kernel : spills)
    if (kernel.store_bytes > 0 || kernel.load_bytes > 0)
      sentences.push_back(fmt::format(
          "ptxas spilled registers in {}: {} B of spill stores and {} B of spill loads go "
          "through local memory; cut live registers (smaller accumulator tiles per thread) or "
          "give this warpgroup more with setmaxnreg.",
          kernel.kernel, kernel.store_bytes, kernel.load_bytes));
  for (const KernelSpills& kernel : spills)
    for (const std::string& advisory : kernel.advisories)
      sentences.push_back(fmt::format(
          "ptxas in {}: {}. The kernel compiled and runs, but not as written: fix what ptxas "
          "names (for wgmma: keep ordinary instructions off the registers of in-flight wgmmas, "
          "and give accumulators a value on every path into a loop).",
          kernel.kernel.empty() ? "(no kernel named)" : kernel.kernel, advisory));
  if (!launches.empty()) {
    // The launch that costs most GPU time is the one worth tuning.
    const NcuLaunchMetrics* longest = &launches.front();
    double total_ns = 0;
    for (const NcuLaunchMetrics& launch : launches) {
      double ns = metric_of(launch, "gpu__time_duration.sum").value_or(0);
      total_ns += ns;
      if (ns > metric_of(*longest, "gpu__time_duration.sum").value_or(0)) longest = &launch;
    }
    std::vector<std::optional<std::string>> found = {
        speed_of_light(*longest), warp_stalls(*longest), bank_conflicts(*longest),
        occupancy(*longest), memory_traffic(*longest)};
    bool first = true;
    for (auto& sentence : found) {
      if (!sentence) continue;
      if (first && launches.size() > 1 && total_ns > 0) {
        double share = 100 * metric_of(*longest, "gpu__time_duration.sum").value_or(0) / total_ns;
        *sentence = fmt::format("In {} ({} of the call's GPU time): {}",
                                kernel_identifier(longest->kernel), pct_text(share), *sentence);
      }
      first = false;
      sentences.push_back(std::move(*sentence));
    }
  }
  if (sentences.size() > max_sentences) sentences.resize(max_sentences);
  return sentences;
}

}  // namespace ptxb
