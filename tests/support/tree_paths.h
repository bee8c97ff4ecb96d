// The source- and build-tree paths the tests were compiled with, each overridable at run time by
// the environment variable of the same name. The tests are not installed; scripts/gpu_check.sh
// runs the carried test binaries on the H200, where the tree lives elsewhere and ptxbench is an
// installed copy (.devcarry/bin, .devcarry/libexec/ptxbench), and sets these variables.
#pragma once

#include <cstdlib>
#include <string>

namespace ptxb::tree {

inline std::string path_from_env_or(const char* variable, const char* built) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? std::string(value) : std::string(built);
}

// The repository (solutions/, examples/, docs/).
inline std::string source_dir() {
  return path_from_env_or("PTXB_SOURCE_DIR", PTXB_SOURCE_DIR);
}
// testdata/.
inline std::string testdata_dir() {
  return path_from_env_or("PTXB_TESTDATA_DIR", PTXB_TESTDATA_DIR);
}
// The `ptxbench` CLI under test.
inline std::string cli() {
  return path_from_env_or("PTXB_CLI_PATH", PTXB_CLI_PATH);
}
#ifdef PTXB_RUNNER_PATH
// ptxbench-runner.
inline std::string runner() {
  return path_from_env_or("PTXB_RUNNER_PATH", PTXB_RUNNER_PATH);
}
#endif

}  // namespace ptxb::tree
