#include "trace/diagnostics.h"

#include "core/strings.h"

namespace ptxb {

std::string Issue::to_string() const {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!json_path.empty()) out += json_path + ": ";
  return out + message;
}

Json Issue::to_json() const {
  Json out = Json::object();
  out["file"] = file;
  out["path"] = json_path;
  out["message"] = message;
  return out;
}

void Diagnostics::error(const std::string& json_path, std::string message) {
  issues_.push_back({file_, json_path, std::move(message)});
}

void Diagnostics::add_error(const Error& error) {
  // Lower layers already prefix the file name; keep their message whole.
  issues_.push_back({"", "", error.message});
}

void Diagnostics::merge(const Diagnostics& other) {
  issues_.insert(issues_.end(), other.issues_.begin(), other.issues_.end());
}

Error Diagnostics::to_error() const {
  std::vector<std::string> lines;
  for (const auto& issue : issues_) lines.push_back(issue.to_string());
  return Error{join(lines, "\n"), "validation"};
}

}  // namespace ptxb
