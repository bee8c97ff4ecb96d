#include "eval/device_facts.h"

#include <algorithm>

#include "core/json_fields.h"

namespace ptxb {

double DeviceFacts::physical_floor_ms(double flops, double min_bytes) const {
  double floor_seconds = 0.0;
  const double peak_flops = static_cast<double>(sm_count) * bf16_dense_flop_per_clock_per_sm *
                            static_cast<double>(max_sm_clock_mhz) * 1e6;
  if (peak_flops > 0 && flops > 0) floor_seconds = std::max(floor_seconds, flops / peak_flops);
  if (memory_bytes_per_second > 0 && min_bytes > 0)
    floor_seconds = std::max(floor_seconds, min_bytes / memory_bytes_per_second);
  return floor_seconds * 1e3;
}

Json DeviceFacts::to_json() const {
  return Json{{"name", name},
              {"sm_count", sm_count},
              {"max_sm_clock_mhz", max_sm_clock_mhz},
              {"bf16_dense_flop_per_clock_per_sm", bf16_dense_flop_per_clock_per_sm},
              {"memory_bytes_per_second", memory_bytes_per_second},
              {"l2_bytes", l2_bytes},
              {"compute_processes", compute_processes},
              {"clock_event_reasons", clock_event_reasons},
              {"sm_clock_mhz", sm_clock_mhz}};
}

Result<DeviceFacts> DeviceFacts::from_json(const Json& json) {
  DeviceFacts f;
  FieldReader r(json);
  r.required("name", f.name).required("sm_count", f.sm_count);
  r.required("max_sm_clock_mhz", f.max_sm_clock_mhz);
  r.required("bf16_dense_flop_per_clock_per_sm", f.bf16_dense_flop_per_clock_per_sm);
  r.required("memory_bytes_per_second", f.memory_bytes_per_second);
  r.required("l2_bytes", f.l2_bytes).required("compute_processes", f.compute_processes);
  r.required("clock_event_reasons", f.clock_event_reasons);
  r.required("sm_clock_mhz", f.sm_clock_mhz);
  PTXB_RETURN_IF_ERROR(r.status());
  return f;
}

}  // namespace ptxb
