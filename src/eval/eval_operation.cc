#include "eval/eval_operation.h"

#include <array>
#include <utility>

#include "eval/eval_types.h"

namespace ptxb {
namespace {

constexpr std::array<std::pair<EvalOperation, std::string_view>, 4> kOperationNames = {{
    {EvalOperation::kEvaluate, "evaluate"},
    {EvalOperation::kSanitize, "sanitize"},
    {EvalOperation::kProfile, "profile"},
    {EvalOperation::kDebug, "debug"},
}};

}  // namespace

std::string_view eval_operation_name(EvalOperation operation) {
  for (const auto& [op, name] : kOperationNames)
    if (op == operation) return name;
  return "evaluate";
}

std::optional<EvalOperation> parse_eval_operation(std::string_view name) {
  for (const auto& [op, n] : kOperationNames)
    if (n == name) return op;
  return std::nullopt;
}

std::string_view eval_operation_names() {
  return "evaluate, sanitize, profile, debug";
}

Status apply_operation(EvalOperation operation, EvalOptions& options) {
  switch (operation) {
    case EvalOperation::kEvaluate:
      return ok_status();
    case EvalOperation::kSanitize:
      // The energy phase runs after interleaved timing, which sanitize never reaches.
      if (options.energy)
        return make_error("invalid",
                          "operation sanitize times nothing: energy needs operation evaluate");
      if (!options.also_reference.empty())
        return make_error("invalid",
                          "operation sanitize times nothing: also_reference needs operation "
                          "evaluate");
      options.sanitize = true;
      // Never reached (the supervisor stops after correctness); off, so the record says so.
      options.ncu = false;
      return ok_status();
    case EvalOperation::kDebug:
      // Like sanitize, nothing is timed; the stage explains a failure instead of gating on one.
      if (options.energy)
        return make_error("invalid",
                          "operation debug times nothing: energy needs operation evaluate");
      if (!options.also_reference.empty())
        return make_error("invalid",
                          "operation debug times nothing: also_reference needs operation evaluate");
      options.debug = true;
      options.ncu = false;
      return ok_status();
    case EvalOperation::kProfile:
      if (!options.ncu)
        return make_error("invalid",
                          "operation profile is the Nsight Compute check: ncu false contradicts "
                          "it (use operation evaluate without ncu)");
      return ok_status();
  }
  return ok_status();
}

}  // namespace ptxb
