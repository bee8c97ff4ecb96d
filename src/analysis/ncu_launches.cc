#include "analysis/ncu_launches.h"

#include <charconv>
#include <optional>

#include "analysis/ncu_source.h"
#include "core/strings.h"

namespace ptxb {
namespace {

// The columns the parse needs, by their index in the header row.
struct LaunchColumns {
  std::size_t id = 0, name = 0, block = 0, grid = 0, time = 0;
  std::optional<std::size_t> inst_executed, thread_true, per_opcode;  // instanced, when present
  std::vector<std::pair<std::string, std::size_t>> metrics;           // other metric columns
};

// Finds each needed column in a header row; an error names the missing one.
Result<LaunchColumns> find_launch_columns(const std::vector<std::string>& header) {
  auto index_of = [&](std::string_view name) -> Result<std::size_t> {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    return make_error("parse", "no \"{}\" column in the raw page", name);
  };
  LaunchColumns columns;
  PTXB_ASSIGN_OR_RETURN(columns.id, index_of("ID"));
  PTXB_ASSIGN_OR_RETURN(columns.name, index_of("Kernel Name"));
  PTXB_ASSIGN_OR_RETURN(columns.block, index_of("Block Size"));
  PTXB_ASSIGN_OR_RETURN(columns.grid, index_of("Grid Size"));
  PTXB_ASSIGN_OR_RETURN(columns.time, index_of(kNcuGpuTimeMetric));
  // Metric names have a double underscore between unit and counter (dram__bytes_read.sum);
  // the numeric launch attributes (launch__registers_per_thread, ...) come too, for the
  // profiler hints (analysis/ncu_hints.h).
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "inst_executed") columns.inst_executed = i;
    if (header[i] == "thread_inst_executed_true") columns.thread_true = i;
    if (header[i] == kNcuThreadTruePerOpcode) columns.per_opcode = i;
    if (i != columns.time && contains(header[i], "__")) columns.metrics.emplace_back(header[i], i);
  }
  return columns;
}

// A metric value: digits with optional thousands separators and an optional fraction.
Result<double> parse_metric_value(std::string_view field) {
  std::string digits;
  for (char c : trim(field))
    if (c != ',') digits += c;
  double value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || value < 0)
    return make_error("parse", "'{}' is not a metric value", field);
  return value;
}

// The instances of a cell printed with --print-metric-instances details,
// "total (key: value; key: value)", as key -> value. An empty map for a cell without instances
// (a plain total, or "0"); an error for a list that is not key: value pairs.
Result<std::map<std::string, std::int64_t>> parse_instances(std::string_view cell) {
  std::map<std::string, std::int64_t> instances;
  const std::size_t open = cell.find('(');
  if (open == std::string_view::npos) return instances;
  const std::size_t close = cell.rfind(')');
  if (close == std::string_view::npos || close < open)
    return make_error("parse", "unbalanced instance list in '{}'", cell.substr(0, 80));
  for (const std::string& item : split(cell.substr(open + 1, close - open - 1), ';')) {
    const std::size_t colon = item.rfind(':');
    if (colon == std::string::npos)
      return make_error("parse", "instance '{}' is not key: value", trim(item));
    auto value = parse_metric_value(std::string_view(item).substr(colon + 1));
    if (!value.ok()) return value.error();
    instances[trim(std::string_view(item).substr(0, colon))] = static_cast<std::int64_t>(*value);
  }
  return instances;
}

// The instances keyed by instruction address ("0x7f2cbf7a0010").
Result<std::map<std::uint64_t, std::int64_t>> parse_pc_instances(std::string_view cell) {
  PTXB_ASSIGN_OR_RETURN(auto instances, parse_instances(cell));
  std::map<std::uint64_t, std::int64_t> by_pc;
  for (const auto& [key, value] : instances) {
    std::uint64_t pc = 0;
    if (!starts_with(key, "0x") || key.size() <= 2)
      return make_error("parse", "'{}' is not an instruction address", key);
    const auto [end, error] = std::from_chars(key.data() + 2, key.data() + key.size(), pc, 16);
    if (error != std::errc() || end != key.data() + key.size())
      return make_error("parse", "'{}' is not an instruction address", key);
    by_pc[pc] = value;
  }
  return by_pc;
}

Result<NcuLaunch> parse_launch_row(const std::vector<std::string>& row,
                                   const LaunchColumns& columns) {
  NcuLaunch launch;
  launch.name = row[columns.name];
  PTXB_ASSIGN_OR_RETURN(launch.block, parse_launch_dims(row[columns.block]));
  PTXB_ASSIGN_OR_RETURN(launch.grid, parse_launch_dims(row[columns.grid]));
  PTXB_ASSIGN_OR_RETURN(launch.gpu_time_ns, parse_metric_value(row[columns.time]));
  // Not every counter exists on every GPU ("n/a"): such a cell is left out, and whoever needs
  // the metric says it is missing.
  for (const auto& [metric, index] : columns.metrics)
    if (auto value = parse_metric_value(row[index]); value.ok()) launch.metrics[metric] = *value;
  if (columns.inst_executed) {
    PTXB_ASSIGN_OR_RETURN(launch.inst_executed_by_pc,
                          parse_pc_instances(row[*columns.inst_executed]));
  }
  if (columns.thread_true) {
    PTXB_ASSIGN_OR_RETURN(launch.thread_true_by_pc, parse_pc_instances(row[*columns.thread_true]));
  }
  if (columns.per_opcode) {
    PTXB_ASSIGN_OR_RETURN(launch.thread_true_by_opcode, parse_instances(row[*columns.per_opcode]));
  }
  return launch;
}

}  // namespace

Result<std::array<std::uint32_t, 3>> parse_launch_dims(std::string_view text) {
  std::string inner = trim(text);
  if (inner.size() >= 2 && inner.front() == '(' && inner.back() == ')')
    inner = inner.substr(1, inner.size() - 2);
  const std::vector<std::string> parts = split(inner, ',');
  if (parts.empty() || parts.size() > 3)
    return make_error("parse", "'{}' is not a launch shape", text);
  std::array<std::uint32_t, 3> dims = {1, 1, 1};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string part = trim(parts[i]);
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), dims[i]);
    if (part.empty() || error != std::errc() || end != part.data() + part.size())
      return make_error("parse", "'{}' is not a launch shape", text);
  }
  return dims;
}

Result<std::vector<NcuLaunch>> parse_ncu_launches_csv(std::string_view raw_text,
                                                      const std::string& origin) {
  // Kernel names end up in JSON results: valid UTF-8 only.
  const std::string clean_text = to_valid_utf8(raw_text);
  const std::string_view text = clean_text;
  std::vector<NcuLaunch> launches;
  std::optional<LaunchColumns> columns;
  std::size_t width = 0;
  std::vector<std::string> row;
  int line_number = 0;
  for (const std::string& line : split(text, '\n')) {
    ++line_number;
    const std::string record = trim(line);
    if (record.empty() || record.front() != '"') continue;  // ncu messages, program output
    if (std::string bad = split_csv_record(record, row); !bad.empty())
      return make_error("parse", "{}:{}: {}", origin, line_number, bad);
    if (!columns) {
      auto found = find_launch_columns(row);
      if (!found.ok())
        return make_error("parse", "{}:{}: {}", origin, line_number, found.error().message);
      columns = *found;
      width = row.size();
      continue;
    }
    if (row.size() != width)
      return make_error("parse", "{}:{}: {} fields, the header has {}", origin, line_number,
                        row.size(), width);
    if (row[columns->id].empty()) {  // the units row
      if (row[columns->time] != "nsecond" && row[columns->time] != "ns")
        return make_error("parse", "{}:{}: {} in '{}', expected nanoseconds (--print-units base)",
                          origin, line_number, kNcuGpuTimeMetric, row[columns->time]);
      continue;
    }
    auto launch = parse_launch_row(row, *columns);
    if (!launch.ok())
      return make_error("parse", "{}:{}: {}", origin, line_number, launch.error().message);
    launches.push_back(std::move(launch).value());
  }
  if (!columns)
    return make_error("parse", "{}: no raw-page header (no launch was profiled?)", origin);
  return launches;
}

}  // namespace ptxb
