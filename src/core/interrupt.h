// Ctrl-C and SIGTERM for long jobs (`ptxbench run`). The handler only records the signal; the
// code that waits polls interrupted() and stops itself: a child process's group is killed
// (core/process.cc: nvcc's cicc and ptxas run in their own group and never see the terminal's
// SIGINT), an HTTP request to a model is aborted, a backoff sleep ends, and no half-done turn is
// committed. Unwinding normally is what removes staging folders (their owners' destructors).
// A second signal while stopping ends the process at once (the default action).
#pragma once

namespace ptxb {

// Installs the handlers for SIGINT and SIGTERM (idempotent).
void install_interrupt_handlers();

// The signal that asked us to stop (SIGINT or SIGTERM), 0 if none. Async-signal-safe to set,
// lock-free to read from any thread.
int interrupt_signal();
inline bool interrupted() {
  return interrupt_signal() != 0;
}

// For tests: records `signal_number` as if it had arrived (0 clears).
void set_interrupt_signal_for_testing(int signal_number);

}  // namespace ptxb
