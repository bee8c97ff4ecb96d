// `ptxbench prompt`: the exact first-turn prompt of a task under a knowledge-pack variant
// (design.md §5), with sizes, and the list of variants with their sizes.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "agent/task_prompt.h"
#include "cli/command.h"
#include "core/strings.h"
#include "packs/pack_library.h"
#include "packs/prompt_builder.h"
#include "packs/token_estimate.h"
#include "tasks/registry.h"

namespace ptxb::cli {
namespace {

struct PromptCommandFlags {
  std::string task;
  std::string variant;
  std::string packs_dir;
  bool list_variants = false;
  bool json = false;
};

std::string size_text(const PromptSize& size) {
  return fmt::format("{} bytes, ~{} tokens", size.bytes, size.approx_tokens);
}

Result<int> run_show(const PackLibrary& library, const Task& task,
                     const PromptCommandFlags& options) {
  PTXB_ASSIGN_OR_RETURN(Prompt prompt, build_task_prompt(library, task, options.variant));
  for (const auto& warning : prompt.warnings) std::cerr << "ptxbench: warning: " << warning << "\n";
  if (options.json) {
    Json out = prompt_to_json(prompt);
    out["task"] = task.name;
    out["task_variants"] = task.prompt_variants;
    print_json(out);
    return 0;
  }
  std::cout << fmt::format("===== system prompt ({}) =====\n", size_text(prompt.system_size));
  std::cout << prompt.system;
  std::cout << fmt::format("===== first user message ({}) =====\n",
                           size_text(prompt.first_user_size));
  std::cout << prompt.first_user;
  std::cout << fmt::format(
      "===== task {}, variant {}, pack {}: knowledge pack {}; total {} (tokens approximate: "
      "bytes / 3.5) =====\n",
      task.name, prompt.variant, prompt.pack, size_text(prompt.pack_size),
      size_text(prompt.total_size));
  return 0;
}

// One row per (architecture, tag): pack size, and the whole system prompt's size when a task
// is given (the ABI text depends on the task's signature).
Result<int> run_list(const PackLibrary& library, const Task* task,
                     const PromptCommandFlags& options) {
  Json rows = Json::array();
  std::vector<std::string> warnings;
  for (const auto& arch : library.architectures()) {
    if (task && arch.arch != task->arch) continue;
    for (const auto& tag : library.tags()) {
      PTXB_ASSIGN_OR_RETURN(ComposedPack pack, library.compose(arch.arch, tag.name));
      for (const auto& warning : pack.warnings)
        if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end())
          warnings.push_back(warning);
      std::vector<std::string> fragments;
      for (const auto& fragment : pack.fragments) fragments.push_back(fragment.name);
      Json row = {{"arch", arch.arch},
                  {"pack", arch.pack},
                  {"tag", tag.name},
                  {"description", tag.description},
                  {"fragments", fragments},
                  {"pack_bytes", pack.text.size()},
                  {"pack_approx_tokens", approx_tokens(pack.text)}};
      if (task) {
        PTXB_ASSIGN_OR_RETURN(Prompt prompt, build_task_prompt(library, *task, tag.name));
        const auto& defaults = task->prompt_variants;
        row["task_default"] =
            std::find(defaults.begin(), defaults.end(), tag.name) != defaults.end();
        row["system_bytes"] = prompt.system_size.bytes;
        row["system_approx_tokens"] = prompt.system_size.approx_tokens;
      }
      rows.push_back(row);
    }
  }
  for (const auto& warning : warnings) std::cerr << "ptxbench: warning: " << warning << "\n";
  if (options.json) {
    print_json(Json{{"token_method", "approximate: ceil(bytes / 3.5)"},
                    {"task", task ? Json(task->name) : Json(nullptr)},
                    {"variants", rows}});
    return 0;
  }
  std::cout << fmt::format("{:<8} {:<46} {:>9} {:>8}", "ARCH", "VARIANT", "PACK B", "~TOK");
  if (task) std::cout << fmt::format(" {:>9} {:>8}  DEFAULT", "SYSTEM B", "~TOK");
  std::cout << "  FRAGMENTS\n";
  for (const auto& row : rows) {
    std::cout << fmt::format("{:<8} {:<46} {:>9} {:>8}", row["arch"].get<std::string>(),
                             row["tag"].get<std::string>(), row["pack_bytes"].get<std::size_t>(),
                             row["pack_approx_tokens"].get<std::size_t>());
    if (task)
      std::cout << fmt::format(" {:>9} {:>8}  {:<7}", row["system_bytes"].get<std::size_t>(),
                               row["system_approx_tokens"].get<std::size_t>(),
                               row["task_default"].get<bool>() ? "yes" : "");
    std::vector<std::string> fragments = row["fragments"].get<std::vector<std::string>>();
    std::cout << "  " << join(fragments, ",") << "\n";
  }
  std::cout << "Tokens are approximate (bytes / 3.5); see docs/knowledge-packs.md.\n";
  return 0;
}

}  // namespace

CommandSpec make_prompt_command() {
  return {"prompt",
          "Print the exact system prompt and first user message of a task under a knowledge-pack "
          "variant, with sizes",
          [](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
            auto options = std::make_shared<PromptCommandFlags>();
            app.add_option("--task", options->task, "Task name (see `ptxbench tasks list`)");
            app.add_option("--variant", options->variant,
                           "Variant tag, e.g. base, base+fa3_fwd (see --list-variants)");
            app.add_flag("--list-variants", options->list_variants,
                         "List the variant tags with their sizes (for --task's architecture "
                         "only, and with the full system-prompt size, when --task is given)");
            app.add_option("--packs-dir", options->packs_dir,
                           "Knowledge-pack folder (default: $PTXBENCH_PACKS_DIR, else packs/ "
                           "in the data folder: `ptxbench env`)")
                ->check(CLI::ExistingDirectory);
            app.add_flag("--json", options->json, "Machine-readable output");
            return [options, &globals]() -> Result<int> {
              std::string packs_dir = options->packs_dir;
              if (packs_dir.empty()) {
                PTXB_ASSIGN_OR_RETURN(packs_dir, default_packs_dir());
              }
              PTXB_ASSIGN_OR_RETURN(PackLibrary library, PackLibrary::load(packs_dir));
              const Task* task = nullptr;
              std::optional<TaskRegistry> registry;
              if (!options->task.empty()) {
                PTXB_ASSIGN_OR_RETURN(auto loaded, TaskRegistry::load(globals.tasks_dirs));
                registry.emplace(std::move(loaded));
                PTXB_ASSIGN_OR_RETURN(task, registry->get(options->task));
              }
              if (options->list_variants) return run_list(library, task, *options);
              if (!task || options->variant.empty())
                return make_error("usage",
                                  "prompt needs --task NAME and --variant TAG (or "
                                  "--list-variants)");
              return run_show(library, *task, *options);
            };
          }};
}

}  // namespace ptxb::cli
