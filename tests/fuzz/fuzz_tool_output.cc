// Output of the tools the harness runs on a candidate, which the candidate's source can shape:
// the ptxas -v report, cuobjdump -sass text (with the static verdict), Nsight Compute's source
// page and launch list CSVs, and compute-sanitizer's report. The first byte picks the parser.
#include "analysis/ncu_launches.h"
#include "analysis/ncu_source.h"
#include "analysis/sanitizer_report.h"
#include "fuzz_input.h"
#include "sass/ptxas_report.h"
#include "sass/sass_analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [selector, text] = ptxb::fuzz::split_selector(data, size);
  switch (selector % 5) {
    case 0:
      (void)ptxb::ptxas_report_to_json(ptxb::parse_ptxas_report(text)).dump();
      break;
    case 1: {
      auto kernels = ptxb::parse_cuobjdump_sass(text, "sass");
      if (kernels.ok())
        (void)ptxb::sass_summary_to_json(
            ptxb::summarize_sass(std::move(kernels).value(), (selector & 8) ? "sm_100a" : "sm_90a"))
            .dump();
      break;
    }
    case 2: {
      auto kernels = ptxb::parse_ncu_source_csv(text, "ncu.csv");
      if (kernels.ok()) (void)ptxb::decide_dynamic(kernels.value(), "sm_90a");
      break;
    }
    case 3:
      (void)ptxb::parse_ncu_launches_csv(text, "launches.csv");
      (void)ptxb::parse_launch_dims(text);
      break;
    default:
      (void)ptxb::parse_sanitizer_output(text, (selector & 8) ? "racecheck" : "memcheck");
      break;
  }
  return 0;
}
