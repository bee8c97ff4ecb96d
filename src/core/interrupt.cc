#include "core/interrupt.h"

#include <signal.h>

#include <atomic>

namespace ptxb {
namespace {

// sig_atomic_t-sized and lock-free, so the handler may store it (POSIX async-signal safety).
std::atomic<int> g_interrupt_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_interrupt(int signal_number) {
  int expected = 0;
  if (!g_interrupt_signal.compare_exchange_strong(expected, signal_number)) {
    // Asked twice: the user wants out now, not a clean stop.
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
  }
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a blocking call returns EINTR at once, and its loop sees the flag.
  action.sa_flags = 0;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() {
  return g_interrupt_signal.load(std::memory_order_relaxed);
}

void set_interrupt_signal_for_testing(int signal_number) {
  g_interrupt_signal.store(signal_number);
}

}  // namespace ptxb
