#include "service/fair_queue.h"

#include <algorithm>

namespace ptxb::service {

void FairQueue::push(const std::string& owner, std::int64_t id) {
  auto [it, inserted] = queues_.try_emplace(owner);
  if (inserted) rotation_.push_back(owner);
  it->second.push_back(id);
  ++size_;
}

void FairQueue::push_front(const std::string& owner, std::int64_t id) {
  auto [it, inserted] = queues_.try_emplace(owner);
  if (inserted) rotation_.push_back(owner);
  it->second.push_front(id);
  ++size_;
}

std::optional<QueuedJob> FairQueue::pop() {
  if (rotation_.empty()) return std::nullopt;
  const std::string owner = rotation_.front();
  rotation_.pop_front();
  auto it = queues_.find(owner);
  QueuedJob job{it->second.front(), owner};
  it->second.pop_front();
  --size_;
  if (it->second.empty())
    queues_.erase(it);
  else
    rotation_.push_back(owner);
  return job;
}

bool FairQueue::remove(const std::string& owner, std::int64_t id) {
  auto it = queues_.find(owner);
  if (it == queues_.end()) return false;
  auto& fifo = it->second;
  auto pos = std::find(fifo.begin(), fifo.end(), id);
  if (pos == fifo.end()) return false;
  fifo.erase(pos);
  --size_;
  if (fifo.empty()) {
    queues_.erase(it);
    rotation_.remove(owner);
  }
  return true;
}

std::size_t FairQueue::size_of(const std::string& owner) const {
  auto it = queues_.find(owner);
  return it == queues_.end() ? 0 : it->second.size();
}

}  // namespace ptxb::service
