// Approximate token counts for prompts and knowledge packs.
//
// The count is an estimate, not a tokenizer: ceil(UTF-8 bytes / 3.5). The ratio is calibrated on
// the paper's own figure for its Hopper base pack (77 kB ↔ 22.3k Qwen tokens, 3.45 bytes per
// token); mixed English prose, CUDA and PTX land near it for the BPE tokenizers of current
// models (±15 %). docs/knowledge-packs.md states the method next to every size it reports.
// It is deterministic and dependency-free, so sizes are reproducible and testable.
#pragma once

#include <cstddef>
#include <string_view>

namespace ptxb {

// Bytes per token assumed by approx_tokens(), written as a ratio of integers (7/2 = 3.5) so the
// estimate is exact integer arithmetic.
inline constexpr std::size_t kApproxTokenBytesNumerator = 7;
inline constexpr std::size_t kApproxTokenBytesDenominator = 2;

inline constexpr std::size_t approx_tokens_for_bytes(std::size_t bytes) {
  return (bytes * kApproxTokenBytesDenominator + kApproxTokenBytesNumerator - 1) /
         kApproxTokenBytesNumerator;
}

inline constexpr std::size_t approx_tokens(std::string_view text) {
  return approx_tokens_for_bytes(text.size());
}

}  // namespace ptxb
