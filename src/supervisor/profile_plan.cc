#include "supervisor/profile_plan.h"

#include <algorithm>

#include "analysis/ncu_hints.h"
#include "analysis/ncu_launches.h"
#include "analysis/ncu_work.h"
#include "core/strings.h"

namespace ptxb {
namespace {

// The characters ncu's regular expressions treat specially (ECMAScript and PCRE agree on
// these); mangled names hold '$' and '.' in practice.
bool is_regex_special(char c) {
  return std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos;
}

// The text after the last line that starts with `marker` and before the next marker line (or
// the end). nullopt when the marker never starts a line.
std::optional<std::string> after_last_marker(std::string_view output, std::string_view marker,
                                             std::string* marker_line_rest = nullptr) {
  std::size_t at = std::string_view::npos;
  for (std::size_t pos = output.find(marker); pos != std::string_view::npos;
       pos = output.find(marker, pos + 1))
    if (pos == 0 || output[pos - 1] == '\n') at = pos;
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t line_end = output.find('\n', at);
  if (marker_line_rest != nullptr)
    *marker_line_rest = std::string(output.substr(
        at + marker.size(), line_end == std::string_view::npos ? std::string_view::npos
                                                               : line_end - at - marker.size()));
  if (line_end == std::string_view::npos) return std::string();
  std::string_view rest = output.substr(line_end + 1);
  if (starts_with(rest, "@@ptxb-ncu-")) return std::string();  // an empty part
  const std::size_t next = rest.find("\n@@ptxb-ncu-");
  return std::string(rest.substr(0, next == std::string_view::npos ? rest.size() : next + 1));
}

}  // namespace

void TimedKernels::add(const CallReply& reply) {
  per_call.push_back(reply.kernel_count);
  std::map<std::string, std::uint32_t>& by_name = per_call_by_name.emplace_back();
  for (const KernelLaunch& launch : reply.kernel_launches) {
    by_name[launch.name] += launch.count;
    bool known = false;
    for (auto& seen : launches)
      if (seen.same_shape(launch)) {
        seen.count += launch.count;
        seen.device_ns += launch.device_ns;
        known = true;
        break;
      }
    if (!known) launches.push_back(launch);
  }
}

TimedKernels TimedKernels::restricted_to(const std::vector<std::string>& names) const {
  auto wanted = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  TimedKernels subset;
  for (const auto& by_name : per_call_by_name) {
    std::map<std::string, std::uint32_t>& kept = subset.per_call_by_name.emplace_back();
    std::uint32_t count = 0;
    for (const auto& [name, n] : by_name)
      if (wanted(name)) {
        kept[name] = n;
        count += n;
      }
    subset.per_call.push_back(count);
  }
  for (const KernelLaunch& launch : launches)
    if (wanted(launch.name)) subset.launches.push_back(launch);
  return subset;
}

double TimedKernels::mean_kernel_ms() const {
  if (per_call.empty()) return 0;
  std::uint64_t total_ns = 0;
  for (const KernelLaunch& launch : launches) {
    if (launch.device_ns == 0) return 0;
    total_ns += launch.device_ns;
  }
  return static_cast<double>(total_ns) * 1e-6 / static_cast<double>(per_call.size());
}

std::optional<std::uint32_t> TimedKernels::kernels_per_call() const {
  if (per_call.empty() || per_call.front() == 0) return std::nullopt;
  for (std::uint32_t count : per_call)
    if (count != per_call.front()) return std::nullopt;
  return per_call.front();
}

Result<ProfilePlan> plan_profile(const TimedKernels& timed, int warmup_calls,
                                 int calls_after_warmup, std::uint64_t random) {
  const std::optional<std::uint32_t> per_call = timed.kernels_per_call();
  if (!per_call)
    return make_error("profile_plan",
                      "the timed calls did not launch one fixed number of kernels per call "
                      "({} samples), so no call can be selected by launch count",
                      timed.per_call.size());
  if (warmup_calls < 0 || calls_after_warmup < 1)
    return make_error("profile_plan", "no call after the warm-up to profile");
  ProfilePlan plan;
  plan.warmup_calls = warmup_calls;
  plan.calls_after_warmup = calls_after_warmup;
  plan.chosen = static_cast<int>(random % static_cast<std::uint64_t>(calls_after_warmup));
  plan.kernels_per_call = *per_call;
  plan.launch_skip = static_cast<std::uint64_t>(plan.profiled_call()) * *per_call;
  return plan;
}

std::optional<ProfilePlan> focus_plan(const ProfilePlan& plan, const TimedKernels& timed,
                                      const std::vector<std::string>& functions) {
  const TimedKernels subset = timed.restricted_to(functions);
  const std::optional<std::uint32_t> per_call = subset.kernels_per_call();
  if (!per_call || *per_call >= plan.kernels_per_call || subset.mean_kernel_ms() <= 0)
    return std::nullopt;
  ProfilePlan focused = plan;
  focused.kernels_per_call = *per_call;
  focused.launch_skip = static_cast<std::uint64_t>(plan.profiled_call()) * *per_call;
  for (const std::string& name : functions)
    if (std::any_of(subset.launches.begin(), subset.launches.end(),
                    [&](const KernelLaunch& l) { return l.name == name; }))
      focused.functions.push_back(name);
  return focused;
}

std::string kernel_name_regex(const std::vector<std::string>& mangled_names) {
  std::string regex = "^(";
  for (std::size_t i = 0; i < mangled_names.size(); ++i) {
    if (i > 0) regex += '|';
    for (char c : mangled_names[i]) {
      if (is_regex_special(c)) regex += '\\';
      regex += c;
    }
  }
  return regex + ")$";
}

namespace {

// ncu's --metrics list: always the kernel time and the work counters; the source page's
// counters and the profiler hints' metrics when the plan asks for them.
std::string metrics_option(const ProfilePlan& plan) {
  std::string metrics = plan.source_counters ? "inst_executed,thread_inst_executed_true," : "";
  metrics += std::string(kNcuGpuTimeMetric) + "," + work_metrics_option();
  if (plan.hint_metrics)
    for (std::string_view metric : kProfilerHintMetrics) metrics += "," + std::string(metric);
  return metrics;
}

}  // namespace

std::vector<std::string> ncu_call_options(const ProfilePlan& plan,
                                          const std::vector<std::string>& cubin_functions) {
  std::vector<std::string> options = {"--clock-control", "none", "--kernel-name-base", "mangled"};
  // Without cubin functions (the library in the candidate slot, A/A mode) every launch counts.
  const std::vector<std::string>& names = plan.functions.empty() ? cubin_functions : plan.functions;
  if (!names.empty())
    options.insert(options.end(), {"--kernel-name", "regex:" + kernel_name_regex(names)});
  options.insert(options.end(),
                 {"--launch-skip", std::to_string(plan.launch_skip), "--launch-count",
                  std::to_string(plan.kernels_per_call), "--metrics", metrics_option(plan)});
  return options;
}

std::string shell_quote(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

std::vector<std::string> ncu_call_wrapper(const std::string& ncu_path, const ProfilePlan& plan,
                                          const std::vector<std::string>& cubin_functions) {
  std::string profile = shell_quote(ncu_path);
  for (const auto& option : ncu_call_options(plan, cubin_functions))
    profile += " " + shell_quote(option);
  const std::string ncu = shell_quote(ncu_path);
  // TMPDIR is the sandbox's private scratch (a tmpfs gone with the sandbox); "$@" is the
  // runner's command line, appended by the launcher after this program's name. The two pages
  // are imported concurrently (each import is a whole ncu start-up), into files printed after.
  const bool source_page = plan.source_counters && !plan.source_from_raw;
  const std::string source_import =
      source_page ? ncu + " --import \"$d/call.ncu-rep\" --page source --csv --print-source sass"
                  : std::string("true");
  const std::string instances =
      plan.source_counters && plan.source_from_raw ? " --print-metric-instances details" : "";
  const std::string script = fmt::format(
      "d=$(mktemp -d) || exit 125\n"
      "t0=$(date +%s%N)\n"
      "{profile} --export \"$d/call\" \"$@\"\n"
      "s=$?\n"
      "t1=$(date +%s%N)\n"
      "printf '\\n{exit}%d\\n' \"$s\"\n"
      "[ \"$s\" -eq 0 ] || exit \"$s\"\n"
      "{source_import} >\"$d/source.csv\" 2>&1 &\n"
      "p=$!\n"
      "{ncu} --import \"$d/call.ncu-rep\" --page raw --csv --print-units base "
      "--print-kernel-base mangled{instances} >\"$d/raw.csv\" 2>&1\n"
      "r=$?\n"
      "wait \"$p\"\n"
      "q=$?\n"
      "t2=$(date +%s%N)\n"
      "printf '{source}\\n'\n"
      "cat \"$d/source.csv\"\n"
      "[ \"$q\" -eq 0 ] || exit \"$q\"\n"
      "printf '{launches}\\n'\n"
      "cat \"$d/raw.csv\"\n"
      "[ \"$r\" -eq 0 ] || exit \"$r\"\n"
      "printf '{phases}profile=%d imports=%d\\n' $(((t1-t0)/1000000)) $(((t2-t1)/1000000)) "
      "2>/dev/null\n"
      "printf '{end}\\n'\n",
      fmt::arg("profile", profile), fmt::arg("ncu", ncu), fmt::arg("exit", kMarkProfileExit),
      fmt::arg("source_import", source_import), fmt::arg("instances", instances),
      fmt::arg("source", kMarkSource), fmt::arg("launches", kMarkLaunches),
      fmt::arg("phases", kMarkPhases), fmt::arg("end", kMarkEnd));
  return {"/bin/sh", "-c", script, "ptxbench-profile"};
}

ProfileOutputParts profile_output_parts(std::string_view output) {
  ProfileOutputParts parts;
  std::string exit_text;
  if (after_last_marker(output, kMarkProfileExit, &exit_text)) {
    const std::string trimmed = trim(exit_text);
    if (!trimmed.empty() && trimmed.size() <= 3 &&
        trimmed.find_first_not_of("0123456789") == std::string::npos)
      parts.profile_exit = std::stoi(trimmed);
  }
  if (auto source = after_last_marker(output, kMarkSource)) parts.source = *source;
  if (auto launches = after_last_marker(output, kMarkLaunches)) parts.launches = *launches;
  std::string phases;
  if (after_last_marker(output, kMarkPhases, &phases))
    for (const std::string& field : split(trim(phases), ' ')) {
      const std::size_t eq = field.find('=');
      if (eq == std::string::npos) continue;
      const std::string value = field.substr(eq + 1);
      if (value.empty() || value.size() > 9 ||
          value.find_first_not_of("0123456789") != std::string::npos)
        continue;
      parts.phases_ms["wrapper_" + field.substr(0, eq)] = std::stod(value);
    }
  parts.complete = after_last_marker(output, kMarkEnd).has_value();
  return parts;
}

}  // namespace ptxb
