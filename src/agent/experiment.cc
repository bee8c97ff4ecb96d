#include "agent/experiment.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "core/strings.h"
#include "core/version.h"

namespace ptxb {
namespace {

Status read_positive_int(const Json& json, const std::string& path, const char* key, int& out,
                         int max) {
  if (!json.contains(key) || json[key].is_null()) return ok_status();
  const Json& v = json[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > max)
    return make_error("config", "{}.{}: expected an integer from 1 to {}", path, key, max);
  out = v.get<int>();
  return ok_status();
}

Result<std::vector<std::string>> read_string_list(const Json& json, const std::string& path) {
  if (!json.is_array()) return make_error("config", "{}: expected an array of strings", path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (!json[i].is_string() || json[i].get<std::string>().empty())
      return make_error("config", "{}: expected a non-empty string", json_path_index(path, i));
    out.push_back(json[i].get<std::string>());
  }
  return out;
}

}  // namespace

Result<ExperimentConfig> ExperimentConfig::from_json(const Json& json, const std::string& origin) {
  auto in = [&](Error e) { return e.with_context(origin); };
  if (!json.is_object()) return in(make_error("config", "$: expected an object"));
  static const std::vector<std::string> kKnown = {"comment", "models",      "suite",
                                                  "tasks",   "variants",    "trajectories",
                                                  "turns",   "concurrency", "early_stop_speedup",
                                                  "eval",    "packs_dir",   "prompt"};
  for (const auto& [key, value] : json.items())
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end())
      return in(make_error("config", "$.{}: unknown field (known: {})", key, join(kKnown, ", ")));

  ExperimentConfig config;
  if (json.contains("models")) {
    if (!json["models"].is_array()) return in(make_error("config", "$.models: expected an array"));
    std::set<std::string> names;
    for (std::size_t i = 0; i < json["models"].size(); ++i) {
      const std::string path = json_path_index("$.models", i);
      auto model = ModelConfig::from_json(json["models"][i], path);
      if (!model.ok()) return in(model.error());
      if (!names.insert(model->name).second)
        return in(make_error("config", "{}.name: \"{}\" is used twice", path, model->name));
      config.models.push_back(std::move(model).value());
    }
  }
  if (json.contains("suite") && !json["suite"].is_null()) {
    if (!json["suite"].is_string()) return in(make_error("config", "$.suite: expected a string"));
    config.suite = json["suite"].get<std::string>();
  }
  if (json.contains("tasks") && !json["tasks"].is_null()) {
    auto tasks = read_string_list(json["tasks"], "$.tasks");
    if (!tasks.ok()) return in(tasks.error());
    config.tasks = std::move(tasks).value();
  }
  if (!config.suite.empty() && !config.tasks.empty())
    return in(make_error("config", "$: give either \"suite\" or \"tasks\", not both"));
  if (json.contains("variants") && !json["variants"].is_null()) {
    auto variants = read_string_list(json["variants"], "$.variants");
    if (!variants.ok()) return in(variants.error());
    config.variants = std::move(variants).value();
  }
  for (auto [key, slot, max] : {std::tuple{"trajectories", &config.trajectories, 1000},
                                std::tuple{"turns", &config.turns, 1000}}) {
    auto status = read_positive_int(json, "$", key, *slot, max);
    if (!status.ok()) return in(status.error());
  }
  if (json.contains("concurrency") && !json["concurrency"].is_null()) {
    const Json& c = json["concurrency"];
    if (!c.is_object()) return in(make_error("config", "$.concurrency: expected an object"));
    for (const auto& [key, value] : c.items())
      if (key != "model" && key != "gpu")
        return in(make_error("config", "$.concurrency.{}: unknown field (known: model, gpu)", key));
    auto model = read_positive_int(c, "$.concurrency", "model", config.concurrency.model, 1024);
    if (!model.ok()) return in(model.error());
    auto gpu = read_positive_int(c, "$.concurrency", "gpu", config.concurrency.gpu, 64);
    if (!gpu.ok()) return in(gpu.error());
  }
  if (json.contains("early_stop_speedup") && !json["early_stop_speedup"].is_null()) {
    const Json& v = json["early_stop_speedup"];
    if (!v.is_number() || v.get<double>() <= 0)
      return in(make_error("config", "$.early_stop_speedup: expected a positive number or null"));
    config.early_stop_speedup = v.get<double>();
  }
  if (json.contains("eval") && !json["eval"].is_null()) {
    auto eval = EvalOptions::from_json(json["eval"]);
    if (!eval.ok()) return in(eval.error().with_context("$.eval"));
    config.eval = std::move(eval).value();
  }
  if (json.contains("packs_dir") && !json["packs_dir"].is_null()) {
    if (!json["packs_dir"].is_string())
      return in(make_error("config", "$.packs_dir: expected a string"));
    config.packs_dir = json["packs_dir"].get<std::string>();
  }
  if (json.contains("prompt") && !json["prompt"].is_null()) {
    auto prompt = PromptOptions::from_json(json["prompt"], "$.prompt");
    if (!prompt.ok()) return in(prompt.error());
    config.prompt = std::move(prompt).value();
  }
  return config;
}

Json ExperimentConfig::to_json() const {
  Json models_json = Json::array();
  for (const auto& m : models) models_json.push_back(m.to_json());
  Json json = Json::object();
  json["models"] = models_json;
  if (!suite.empty()) json["suite"] = suite;
  if (!tasks.empty()) json["tasks"] = tasks;
  json["variants"] = variants.empty() ? Json(nullptr) : Json(variants);
  json["trajectories"] = trajectories;
  json["turns"] = turns;
  json["concurrency"] = {{"model", concurrency.model}, {"gpu", concurrency.gpu}};
  json["early_stop_speedup"] = early_stop_speedup ? Json(*early_stop_speedup) : Json(nullptr);
  json["eval"] = eval.to_json();
  json["packs_dir"] = packs_dir.empty() ? Json(nullptr) : Json(packs_dir);
  json["prompt"] = prompt.to_json();
  return json;
}

Json TrajectoryPlan::to_json() const {
  return Json{{"model", key.model},
              {"arch", key.arch},
              {"definition", key.definition},
              {"workload", key.workload},
              {"workload_name", workload_name},
              {"variant", key.variant},
              {"trajectory", key.trajectory},
              {"task", task},
              {"index", index}};
}

Json ExperimentPlan::identity() const {
  Json models_json = Json::array();
  for (const auto& m : config.models) {
    Json model = m.to_json();
    for (const char* volatile_key :
         {"base_url", "api_key_env", "timeout_s", "connect_timeout_s", "retry", "replay_dir"})
      model.erase(volatile_key);
    models_json.push_back(model);
  }
  Json ids = Json::array();
  for (const auto& t : trajectories) ids.push_back(t.id);
  Json json{{"models", models_json},
            {"turns", config.turns},
            {"trajectories_per_variant", config.trajectories},
            {"early_stop_speedup",
             config.early_stop_speedup ? Json(*config.early_stop_speedup) : Json(nullptr)},
            {"eval", config.eval.to_json()},
            {"trajectory_ids", ids}};
  if (!config.prompt.is_default()) json["prompt"] = config.prompt.to_json();
  return json;
}

Json ExperimentPlan::to_json() const {
  Json list = Json::array();
  for (const auto& t : trajectories) {
    Json entry = t.to_json();
    entry["id"] = t.id;
    list.push_back(entry);
  }
  return Json{{"format", "ptxbench-run-plan/1"},
              {"harness_version", harness_version()},
              {"config", config.to_json()},
              {"identity", identity()},
              {"trajectories", list}};
}

std::string slug(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' ||
          c == '-'))
      c = '_';
  if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
  return out;
}

std::string trajectory_id(const std::string& model, const std::string& task,
                          const std::string& variant, int index) {
  return fmt::format("{}__{}__{}__t{}", slug(model), slug(task), slug(variant), index);
}

Result<ExperimentPlan> make_plan(const ExperimentConfig& config, const TaskRegistry& registry,
                                 const PackLibrary& packs) {
  if (config.models.empty())
    return make_error("usage", "no model: give --model or \"models\" in --config");
  std::vector<const Task*> tasks;
  if (!config.suite.empty()) {
    tasks = registry.list(config.suite);
    if (tasks.empty())
      return make_error("usage", "suite \"{}\" has no tasks (suites: {})", config.suite,
                        join(registry.suites(), ", "));
  } else if (!config.tasks.empty()) {
    for (const auto& name : config.tasks) {
      PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(name));
      if (std::find(tasks.begin(), tasks.end(), task) == tasks.end()) tasks.push_back(task);
    }
  } else {
    return make_error("usage", "no task: give --suite, --task, or \"suite\"/\"tasks\" in --config");
  }
  for (const auto& variant : config.variants)
    if (!packs.find_tag(variant)) {
      std::vector<std::string> tags;
      for (const auto& tag : packs.tags()) tags.push_back(tag.name);
      return make_error("usage", "variant \"{}\" is not a knowledge-pack tag (tags: {})", variant,
                        join(tags, ", "));
    }

  ExperimentPlan plan;
  plan.config = config;
  std::set<std::string> ids;
  for (std::size_t m = 0; m < config.models.size(); ++m) {
    for (const Task* task : tasks) {
      const std::vector<std::string>& variants =
          config.variants.empty() ? task->prompt_variants : config.variants;
      if (variants.empty())
        return make_error("usage", "task {} names no prompt variants; give --variants", task->name);
      for (const auto& variant : variants) {
        for (int index = 0; index < config.trajectories; ++index) {
          TrajectoryPlan t;
          t.model_index = m;
          t.model = config.models[m].name;
          t.task = task->name;
          t.variant = variant;
          t.index = index;
          t.id = trajectory_id(t.model, t.task, variant, index);
          t.key = TrajectoryKey{t.model, task->arch, task->definition.name, task->workload.uuid,
                                variant, t.id};
          t.workload_name = task->workload_name();
          if (!ids.insert(t.id).second)
            return make_error("usage", "two trajectories get the id {}: rename a model", t.id);
          plan.trajectories.push_back(std::move(t));
        }
      }
    }
  }
  return plan;
}

std::string first_json_difference(const Json& a, const Json& b, const std::string& path) {
  if (a.type() != b.type() || (!a.is_object() && !a.is_array())) {
    if (a == b) return "";
    return fmt::format("{}: {} vs {}", path, cap_text(a.dump(), 120), cap_text(b.dump(), 120));
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      if (auto d = first_json_difference(a[i], b[i], json_path_index(path, i)); !d.empty())
        return d;
    if (a.size() != b.size()) return fmt::format("{}: {} entries vs {}", path, a.size(), b.size());
    return "";
  }
  for (const auto& [key, value] : a.items()) {
    if (!b.contains(key)) return fmt::format("{}: present vs absent", json_path_key(path, key));
    if (auto d = first_json_difference(value, b[key], json_path_key(path, key)); !d.empty())
      return d;
  }
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) return fmt::format("{}: absent vs present", json_path_key(path, key));
  return "";
}

}  // namespace ptxb
