#include "cluster/slurm_scheduler.h"

#include "agent/shard.h"
#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

// Slurm's client commands answer in well under a second on a healthy controller; a hung
// controller must not hang the coordinator, which polls again later.
constexpr std::chrono::seconds kToolTimeout{60};

// A tool's message on one line, for an error line.
std::string one_line_text(const std::string& text) {
  return replace_all(trim(text), "\n", "; ");
}

std::string shell_quote(const std::string& word) {
  return "'" + replace_all(word, "'", "'\\''") + "'";
}

std::string array_spec(const ArrayJob& job) {
  std::vector<std::string> indices;
  for (int i : job.indices) indices.push_back(std::to_string(i));
  std::string spec = join(indices, ",");
  if (job.array_parallel > 0) spec += "%" + std::to_string(job.array_parallel);
  return spec;
}

std::string tool_failure(const std::string& tool, const ProcessResult& result) {
  const std::string said =
      trim(result.stderr_text.empty() ? result.stdout_text : result.stderr_text);
  return fmt::format("{} failed ({}){}", tool, result.describe(),
                     said.empty() ? "" : ": " + one_line_text(said));
}

}  // namespace

std::string SlurmScheduler::batch_script(const ArrayJob& job) {
  std::string command;
  for (const auto& word : job.worker_argv) command += shell_quote(word) + " ";
  return fmt::format(
      "#!/bin/bash\n"
      "# Written by `ptxbench run --executor slurm`: array task I runs shard I of {} of {}.\n"
      "# exec: the worker is the batch step's main process, so scancel's SIGTERM reaches it.\n"
      "exec {}--shard \"${{SLURM_ARRAY_TASK_ID}}/{}\"\n",
      job.shard_count, job.run_root, command, job.shard_count);
}

std::vector<std::string> SlurmScheduler::sbatch_argv(const ArrayJob& job,
                                                     const std::string& script) {
  std::vector<std::string> argv{"sbatch", "--parsable", "--job-name=" + job.name,
                                "--array=" + array_spec(job),
                                // %a: the array index, so each shard's log sits in its folder.
                                fmt::format("--output={}/%a-of-{}/slurm-%A_%a.log",
                                            shards_root(job.run_root), job.shard_count)};
  if (!job.partition.empty()) argv.push_back("--partition=" + job.partition);
  if (!job.gres.empty()) argv.push_back("--gres=" + job.gres);
  if (!job.time_limit.empty()) argv.push_back("--time=" + job.time_limit);
  argv.insert(argv.end(), job.extra_args.begin(), job.extra_args.end());
  argv.push_back(script);
  return argv;
}

Result<ProcessResult> SlurmScheduler::run_tool(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = kToolTimeout;
  auto result = processes_.run(spec);
  if (!result.ok())
    return make_error("scheduler", "{}: cannot run it ({}); is Slurm installed here?", spec.argv[0],
                      result.error().message);
  return result;
}

Result<std::string> SlurmScheduler::submit(const ArrayJob& job) {
  if (job.indices.empty()) return make_error("internal", "sbatch: no array index to submit");
  const std::string script = shards_root(job.run_root) + "/sbatch.sh";
  PTXB_RETURN_IF_ERROR(write_file_atomic(script, batch_script(job)));
  PTXB_ASSIGN_OR_RETURN(ProcessResult result, run_tool(sbatch_argv(job, script)));
  if (!result.succeeded()) return make_error("scheduler", "{}", tool_failure("sbatch", result));
  // --parsable prints "JOBID" or "JOBID;CLUSTER".
  const std::string id = trim(split(trim(result.stdout_text), ';').front());
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    return make_error("scheduler", "sbatch printed no job id: \"{}\"",
                      one_line_text(result.stdout_text));
  return id;
}

std::optional<TaskState> SlurmScheduler::parse_state(const std::string& word) {
  // sacct writes "CANCELLED by UID"; squeue and sacct otherwise one word.
  const std::string state = split(trim(word), ' ').front();
  static const std::map<std::string, TaskState> kStates{
      {"PENDING", TaskState::kPending},          {"REQUEUED", TaskState::kPending},
      {"REQUEUE_HOLD", TaskState::kPending},     {"REQUEUE_FED", TaskState::kPending},
      {"SUSPENDED", TaskState::kPending},        {"RESV_DEL_HOLD", TaskState::kPending},
      {"CONFIGURING", TaskState::kRunning},      {"RUNNING", TaskState::kRunning},
      {"COMPLETING", TaskState::kRunning},       {"STAGE_OUT", TaskState::kRunning},
      {"SIGNALING", TaskState::kRunning},        {"RESIZING", TaskState::kRunning},
      {"COMPLETED", TaskState::kCompleted},      {"FAILED", TaskState::kFailed},
      {"BOOT_FAIL", TaskState::kFailed},         {"DEADLINE", TaskState::kFailed},
      {"PREEMPTED", TaskState::kFailed},         {"REVOKED", TaskState::kFailed},
      {"SPECIAL_EXIT", TaskState::kFailed},      {"CANCELLED", TaskState::kCancelled},
      {"TIMEOUT", TaskState::kTimeout},          {"NODE_FAIL", TaskState::kNodeFail},
      {"OUT_OF_MEMORY", TaskState::kOutOfMemory}};
  auto it = kStates.find(state);
  if (it == kStates.end()) return std::nullopt;
  return it->second;
}

void SlurmScheduler::parse_states(const std::string& text, const std::string& job_id,
                                  std::map<int, TaskState>& states) {
  for (const auto& line : split_lines(text)) {
    const auto fields = split(trim(line), '|');
    if (fields.size() < 2 || !starts_with(fields[0], job_id + "_")) continue;
    const std::string index = fields[0].substr(job_id.size() + 1);
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto state = parse_state(fields[1])) states[std::stoi(index)] = *state;
  }
}

Result<std::map<int, TaskState>> SlurmScheduler::query(const std::string& job_id) {
  std::map<int, TaskState> states;
  // sacct first (the accounting database remembers finished tasks for good), squeue on top: it
  // is the controller's live view. Without accounting (sacct: "accounting storage is
  // disabled") squeue alone, which keeps finished tasks for MinJobAge (300 s by default).
  PTXB_ASSIGN_OR_RETURN(ProcessResult sacct,
                        run_tool({"sacct", "--noheader", "--parsable2", "--allocations",
                                  "--jobs=" + job_id, "--format=JobID,State"}));
  if (sacct.succeeded()) parse_states(sacct.stdout_text, job_id, states);
  PTXB_ASSIGN_OR_RETURN(ProcessResult squeue,
                        run_tool({"squeue", "--noheader", "--array", "--states=all",
                                  "--jobs=" + job_id, "--format=%i|%T"}));
  // squeue fails with "Invalid job id" once the controller has purged the job: not an error.
  if (squeue.succeeded()) {
    parse_states(squeue.stdout_text, job_id, states);
  } else if (!contains(squeue.stderr_text, "Invalid job id")) {
    return make_error("scheduler", "{}", tool_failure("squeue", squeue));
  }
  return states;
}

Status SlurmScheduler::cancel(const std::string& job_id, std::optional<int> index) {
  const std::string target = index ? fmt::format("{}_{}", job_id, *index) : job_id;
  PTXB_ASSIGN_OR_RETURN(ProcessResult result, run_tool({"scancel", target}));
  if (!result.succeeded()) return make_error("scheduler", "{}", tool_failure("scancel", result));
  return ok_status();
}

}  // namespace ptxb
