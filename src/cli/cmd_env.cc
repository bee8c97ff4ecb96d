// `ptxbench env`: what this machine can do (toolchain, libraries, driver, GPU).
#include <iostream>

#include <fmt/format.h>

#include "cli/command.h"
#include "env/environment.h"

namespace ptxb::cli {
namespace {

void print_human(const Environment& env) {
  std::cout << fmt::format("ptxbench {}  host {} ({}, {})\n\n", env.harness_version, env.hostname,
                           env.os, env.cpu);
  std::cout << "install:\n";
  for (const char* part : {"data", "helpers", "cuda_root"}) {
    if (!env.install.contains(part)) continue;
    const Json& item = env.install[part];
    std::cout << fmt::format("  {:<18} {}\n", part,
                             item.contains("path")
                                 ? fmt::format("{}  [{}]", item["path"].get<std::string>(),
                                               item["how"].get<std::string>())
                                 : std::string("not found"));
  }
  std::cout << "tools:\n";
  for (const auto& tool : env.tools) {
    std::cout << fmt::format(
        "  {:<18} {}\n", tool.name,
        tool.found ? fmt::format("{}  [{}]", tool.version, tool.path) : std::string("not found"));
  }
  std::cout << "libraries:\n";
  for (const auto& library : env.libraries) {
    std::cout << fmt::format("  {:<18} {}\n", library.name,
                             library.found
                                 ? fmt::format("{}  [{}]", library.version_text, library.path)
                                 : std::string("not loadable"));
  }
  std::cout << "gpus:\n";
  if (env.gpu.gpus.empty()) std::cout << "  none\n";
  for (const auto& gpu : env.gpu.gpus) {
    std::cout << fmt::format(
        "  [{}] {}  {}  {} SMs  L2 {:.0f} MiB  memory {:.0f} GiB  SM clock {}/{} MHz  driver {}\n",
        gpu.index, gpu.name,
        arch_for_compute_capability(gpu.compute_capability_major, gpu.compute_capability_minor),
        gpu.sm_count, gpu.l2_cache_bytes / 1048576.0, gpu.memory_total_bytes / 1073741824.0,
        gpu.sm_clock_mhz, gpu.sm_clock_max_mhz, env.gpu.driver_version);
  }
  auto missing = env.missing();
  if (!missing.empty()) {
    std::cout << "\nmissing:\n";
    for (const auto& line : missing) std::cout << "  - " << line << "\n";
  }
}

}  // namespace

CommandSpec make_env_command() {
  return {"env", "Show the toolchain, libraries, driver and GPUs this machine has",
          [](CLI::App& app, const GlobalOptions&) -> CommandBody {
            auto json = std::make_shared<bool>(false);
            app.add_flag("--json", *json, "Print the environment as JSON");
            app.footer(
                "Works without a GPU: it then says which stages are unavailable and why.\n"
                "Exit status 0 whenever the probe ran (missing pieces are reported, not errors).");
            return [json]() -> Result<int> {
              SystemProcessRunner runner;
              Environment env = probe_environment(runner);
              if (*json)
                print_json(env.to_json());
              else
                print_human(env);
              return 0;
            };
          }};
}

}  // namespace ptxb::cli
