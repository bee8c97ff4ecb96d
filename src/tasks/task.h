// A benchmark task (design.md §3.1, §4): a FlashInfer-Trace definition and one of its workloads,
// plus what PTXBench adds in tasks/tasks.json: target architecture, required instruction
// families, reference backend, tolerance, prompt variants, target speedup and the cost model
// that gives FLOPs and minimum bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "trace/definition.h"
#include "trace/workload.h"

namespace ptxb {

// Element rule (design.md §3.5): an element fails iff |x-ref| > atol and |x-ref| > rtol*|ref|.
struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
};

struct Task {
  std::string name;                 // unique across all loaded sets
  std::vector<std::string> suites;  // "paper-h100", "heldout-h100", "paper-b200", ...
  Definition definition;
  Workload workload;
  std::string arch;  // "sm_90a" | "sm_100a"
  std::vector<std::string>
      target_families;  // Hopper: GMMA, TMA (either); Blackwell: UTC, LDTM, STTM
  // The primary reference (design.md §4 "Which reference"): cublaslt_gemm | cudnn_sdpa_fwd |
  // cudnn_sdpa_bwd | flashinfer_gqa_{paged_decode,paged_prefill,ragged_prefill} | plain_cuda
  std::string reference_backend;
  Tolerance tolerance;
  std::vector<std::string> prompt_variants;  // "base", "base+cluster_multicast", ...
  double target_speedup = 1.2;
  double flops = 0;
  double min_bytes = 0;
  std::string source_workload_uuid;  // the published uuid this workload reproduces ("" if none)
  std::string cost_model;            // key of the formula in docs/tasks.md
  std::string set_root;              // trace-set folder the task came from

  // Const axes of the definition plus the workload's var axes.
  std::map<std::string, std::int64_t> axis_values() const;
  // Definition name + "_" + var axis + value, in definition order: gemm_n7168_k5120_M8192.
  std::string workload_name() const;
  // Concrete shape of every input and output (scalars: empty), in definition order.
  Json shapes_json() const;
  // Everything `ptxbench tasks show` prints, including the exact `run` signature.
  Json to_json() const;
};

// Reference backends the evaluator knows; plain_cuda means "no library reference": correctness
// against a plain CUDA kernel and speedup null (design.md §4).
const std::vector<std::string>& reference_backend_names();
// The FlashInfer backend of a GQA cost model ("gqa_paged_decode" -> "flashinfer_gqa_paged_decode");
// "" for every other cost model. A manifest naming another library for a GQA task, or a
// FlashInfer layout that differs from its cost model's, is rejected.
std::string gqa_reference_for(const std::string& cost_model);
// False for plain_cuda: a plain CUDA kernel is a correctness reference only, never timed.
bool is_library_reference(const std::string& backend);

}  // namespace ptxb
