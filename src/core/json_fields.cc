#include "core/json_fields.h"

namespace ptxb {

Error rebase_json_path(const Error& error, const std::string& parent) {
  // Only messages that start at a root path are re-rooted; any other is given the parent as
  // context, so the location is never lost.
  if (error.message.rfind("$", 0) == 0) return Error{parent + error.message.substr(1), error.code};
  return error.with_context(parent);
}

}  // namespace ptxb
