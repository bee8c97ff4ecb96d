// A counting semaphore with a run-time count and an RAII permit: bounds how many model calls
// or GPU evaluations run at once (std::counting_semaphore fixes its maximum at compile time).
#pragma once

#include <condition_variable>
#include <mutex>

namespace ptxb {

class Semaphore {
 public:
  explicit Semaphore(int count) : count_(count) {}

  void acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    available_.wait(lock, [&] { return count_ > 0; });
    --count_;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++count_;
    }
    available_.notify_one();
  }

  class Permit {
   public:
    explicit Permit(Semaphore& s) : s_(s) { s_.acquire(); }
    ~Permit() { s_.release(); }
    Permit(const Permit&) = delete;
    Permit& operator=(const Permit&) = delete;

   private:
    Semaphore& s_;
  };

 private:
  std::mutex mutex_;
  std::condition_variable available_;
  int count_;
};

}  // namespace ptxb
