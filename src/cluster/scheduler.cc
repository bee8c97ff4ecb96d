#include "cluster/scheduler.h"

namespace ptxb {

const char* task_state_name(TaskState state) {
  switch (state) {
    case TaskState::kPending:
      return "PENDING";
    case TaskState::kRunning:
      return "RUNNING";
    case TaskState::kCompleted:
      return "COMPLETED";
    case TaskState::kFailed:
      return "FAILED";
    case TaskState::kCancelled:
      return "CANCELLED";
    case TaskState::kTimeout:
      return "TIMEOUT";
    case TaskState::kNodeFail:
      return "NODE_FAIL";
    case TaskState::kOutOfMemory:
      return "OUT_OF_MEMORY";
  }
  return "UNKNOWN";
}

bool is_live(TaskState state) {
  return state == TaskState::kPending || state == TaskState::kRunning;
}

}  // namespace ptxb
