// Freezes the candidate's processes while the other side works (interleaved timing, the energy
// phase): its cgroup's cgroup.freeze, so its threads do not run on any CPU and cannot submit
// GPU work against the reference. A no-op without a cgroup of its own (recorded by the caller).
#pragma once

#include <chrono>
#include <string>

#include "core/result.h"
#include "sandbox/process_cgroup.h"

namespace ptxb {

class CandidateFrozen {
 public:
  explicit CandidateFrozen(const std::string& group) : group_(group) {}
  CandidateFrozen(const CandidateFrozen&) = delete;
  CandidateFrozen& operator=(const CandidateFrozen&) = delete;
  ~CandidateFrozen() { (void)thaw(); }

  Status freeze() {
    if (group_.empty()) return ok_status();
    PTXB_RETURN_IF_ERROR(set_group_frozen(real_cgroup_fs(), group_, true, kWait));
    frozen_ = true;
    return ok_status();
  }
  Status thaw() {
    if (!frozen_) return ok_status();
    frozen_ = false;
    return set_group_frozen(real_cgroup_fs(), group_, false, kWait);
  }

 private:
  static constexpr std::chrono::milliseconds kWait{2000};
  const std::string& group_;
  bool frozen_ = false;
};

}  // namespace ptxb
