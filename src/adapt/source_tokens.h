// Source text as the adaptation tools compare it: comments stripped, identifiers extracted, and a
// canonical form in which a renamed copy of a kernel reads the same as the original.
//
//   strip_comments        // and /* */ comments removed (string and character literals kept,
//                         since inline PTX lives in them)
//   identifier_tokens     every identifier of the comment-stripped text, in order: the terms
//                         BM25 retrieval (bm25.h) indexes
//   canonical_source      the leakage-control key: comments, whitespace and line directives
//                         dropped, every identifier the author chose renamed by order of first
//                         appearance (v0, v1, ...), language keywords and CUDA built-ins
//                         (threadIdx, __syncthreads, ...) kept. Two kernels that differ only in
//                         names and layout have the same key; a changed constant, operator,
//                         statement or PTX string is a different key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptxb::adapt {

std::string strip_comments(std::string_view source);
std::vector<std::string> identifier_tokens(std::string_view source);
std::string canonical_source(std::string_view source);
// sha256 of canonical_source: the dedup key written to manifests.
std::string canonical_source_hash(std::string_view source);

}  // namespace ptxb::adapt
