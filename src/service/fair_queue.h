// The service's run queue: FIFO within an owner (a token), round-robin across owners.
//
// A backlogged owner gets one dispatch per turn of the rotation, whatever its queue length, so a
// client that submits 10,000 jobs cannot delay another's single job by more than one job per
// other owner. Pure data structure: the service holds it under its own lock, and rebuilds it
// from the store after a restart (queued jobs in submission order).
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <string>

namespace ptxb::service {

struct QueuedJob {
  std::int64_t id = 0;
  std::string owner;
};

class FairQueue {
 public:
  // Appends `id` to `owner`'s FIFO; a new owner joins the rotation at its end.
  void push(const std::string& owner, std::int64_t id);
  // Puts `id` first in `owner`'s FIFO: a job re-queued after a worker failure keeps its place.
  void push_front(const std::string& owner, std::int64_t id);
  // The front job of the owner whose turn it is; that owner moves to the end of the rotation.
  std::optional<QueuedJob> pop();
  // Removes a queued job (cancel). False when it is not queued.
  bool remove(const std::string& owner, std::int64_t id);

  std::size_t size() const { return size_; }
  std::size_t size_of(const std::string& owner) const;
  std::size_t owners() const { return rotation_.size(); }

 private:
  std::map<std::string, std::deque<std::int64_t>> queues_;  // only non-empty queues
  std::list<std::string> rotation_;                         // owners with queued jobs, in turn
  std::size_t size_ = 0;
};

}  // namespace ptxb::service
