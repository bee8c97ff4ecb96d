// The trajectory viewer of the HTML report: pick model, task, variant and trajectory, then step
// through its turns: the kernel (with a diff to the previous turn), the verdicts, the speedup
// with its 95 % interval, the target-instruction counts, the feedback the model read, tokens
// and times. Self-contained: the data are one inline JSON block and the code one inline script,
// so the page still opens offline.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "metrics/turn_record.h"
#include "report/run_details.h"

namespace ptxb {

// The viewer's data: {"trajectories": [{model, task, workload_name, arch, variant, trajectory,
// run_dir, turns: [...]}]}, sorted by model, task, arch, variant, trajectory. Each turn holds
// the record's fields plus what load_turn_details found, and the diff to the previous turn as
// hunks ([["=", "+", "-"], text] pairs).
Json viewer_data(const std::vector<Trajectory>& trajectories, const KernelRefResolver& resolver);

// The viewer's <section id="viewer">: controls, an empty turn panel, the data block and the
// script that fills the panel (also from a "#viewer=INDEX&turn=N" address, for links).
std::string render_viewer(const Json& data);

}  // namespace ptxb
