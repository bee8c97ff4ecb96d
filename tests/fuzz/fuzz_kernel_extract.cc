// Kernel extraction from a model's text: fenced blocks (CommonMark fences), the choice of the
// block that defines `run`, and the no-code feedback a model gets when there is none.
#include "agent/kernel_extract.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string reply(ptxb::fuzz::as_text(data, size));
  const ptxb::ExtractedKernel extracted = ptxb::extract_kernel(reply);
  if (!extracted.found)
    (void)ptxb::no_code_feedback(extracted, "void run(const float* A, float* C, int64_t M)",
                                 "stop");
  (void)ptxb::defines_run(reply);
  return 0;
}
