// The harness version ("0.1.0+<git describe>"), recorded in every trace and runner hello.
// Defined in a file generated at configure time (build/generated/version.cc), so a new commit
// recompiles one file instead of every file that would otherwise see a changed -D flag.
#pragma once

namespace ptxb {

const char* harness_version();

}  // namespace ptxb
