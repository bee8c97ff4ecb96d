#include "agent/shard.h"

#include "core/fs.h"
#include "core/json_fields.h"

namespace ptxb {
namespace {

std::string layout_path(const std::string& run_root) {
  return shards_root(run_root) + "/layout.json";
}

Result<int> parse_int(const std::string& text, const std::string& whole) {
  try {
    std::size_t used = 0;
    const int value = std::stoi(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return make_error("usage", "--shard {}: expected I/N with whole numbers", whole);
}

}  // namespace

Result<ShardSpec> ShardSpec::parse(const std::string& text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos)
    return make_error("usage", "--shard {}: expected I/N (e.g. 0/4: the first of 4 shards)", text);
  ShardSpec shard;
  PTXB_ASSIGN_OR_RETURN(shard.index, parse_int(text.substr(0, slash), text));
  PTXB_ASSIGN_OR_RETURN(shard.count, parse_int(text.substr(slash + 1), text));
  if (shard.count < 1 || shard.count > kMaxShards)
    return make_error("usage", "--shard {}: N must be 1-{}", text, kMaxShards);
  if (shard.index < 0 || shard.index >= shard.count)
    return make_error("usage", "--shard {}: I must be 0-{} (0-based, as SLURM_ARRAY_TASK_ID)", text,
                      shard.count - 1);
  return shard;
}

std::string ShardSpec::name() const {
  return fmt::format("{}-of-{}", index, count);
}

std::string ShardSpec::arg() const {
  return fmt::format("{}/{}", index, count);
}

std::string shards_root(const std::string& run_root) {
  return run_root + "/shards";
}

std::string shard_dir(const std::string& run_root, const ShardSpec& shard) {
  return shards_root(run_root) + "/" + shard.name();
}

ExperimentPlan shard_plan(const ExperimentPlan& plan, const ShardSpec& shard) {
  ExperimentPlan part{plan.config, {}};
  for (std::size_t i = 0; i < plan.trajectories.size(); ++i)
    if (shard.owns(i)) part.trajectories.push_back(plan.trajectories[i]);
  return part;
}

Result<std::optional<int>> read_shard_layout(const std::string& run_root) {
  const std::string path = layout_path(run_root);
  if (!path_exists(path)) return std::optional<int>{};
  PTXB_ASSIGN_OR_RETURN(Json json, read_json_file(path));
  int count = 0;
  Status read = FieldReader(json).required("count", count).status();
  if (!read.ok()) return read.error().with_context(path);
  if (count < 1 || count > kMaxShards)
    return make_error("parse", "{}: $.count: {} is not 1-{}", path, count, kMaxShards);
  return std::optional<int>{count};
}

Status record_shard_layout(const std::string& run_root, int count) {
  PTXB_ASSIGN_OR_RETURN(const std::optional<int> recorded, read_shard_layout(run_root));
  if (recorded && *recorded != count)
    return make_error("usage",
                      "{} is split into {} shards ({}); continue it with {} shards (or without "
                      "sharding: `ptxbench run --out {}`)",
                      run_root, *recorded, layout_path(run_root), *recorded, run_root);
  if (recorded) return ok_status();
  PTXB_RETURN_IF_ERROR(make_directories(shards_root(run_root)));
  return write_file_atomic(layout_path(run_root),
                           dump_pretty(Json{{"format", "ptxbench-shards/1"}, {"count", count}}));
}

}  // namespace ptxb
