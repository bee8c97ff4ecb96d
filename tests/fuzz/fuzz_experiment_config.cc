// Experiment configs (`ptxbench run --config EXP.json`): the strict JSON reader, then every
// field of the experiment and of its models (ranges, types, the refused api_key), then the
// round trip to plan.json's form.
#include "agent/experiment.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto json = ptxb::parse_json(ptxb::fuzz::as_text(data, size), "exp.json");
  if (!json.ok()) return 0;
  auto config = ptxb::ExperimentConfig::from_json(json.value(), "exp.json");
  if (config.ok()) (void)config->to_json().dump();
  return 0;
}
