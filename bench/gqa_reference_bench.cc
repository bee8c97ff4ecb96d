// GQA references on the GPU: for each heldout-h100 GQA task, the FlashInfer reference and the
// plain CUDA one are called through the candidate ABI (ReferenceBackend::invoke, the entry point
// libptxbench_reference.so gives the runner), on the task's real workload (index arrays from its
// safetensors blob, normal(0,1) bf16 q/k/v). Prints per backend the median latency (CUDA events,
// L2 flushed before every sample, plan outside the timed calls), TFLOP/s from the task's cost
// model, and FlashInfer's plan; then FlashInfer's output and LSE checked against the plain
// reference computed in fp32 with the task tolerance. Exit status 1 on a mismatch.
//
//   gqa_reference_bench [--tasks DIR] [--iters N] [--only TASK]
//
// Not the evaluator's timing contract (CUPTI activity windows in a sandboxed runner); a quick
// A/A-free look at what the reference costs and whether it is right. A build configured
// without -DPTXB_WITH_FLASHINFER=ON times the plain reference only and says so.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "abi/signature.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/input_gen.h"
#include "cuda/l2_flush.h"
#include "references/gqa_backends.h"
#include "references/plain_gqa.h"
#include "tasks/registry.h"
#include "trace/safetensors.h"

namespace {

using namespace ptxb;
using namespace ptxb::gpu;

constexpr int kWarmupCalls = 5;  // first call plans (prepare_call); the rest warm clocks/caches
constexpr std::uint64_t kSeed = 20261201;

// Device storage of one task's parameters, keyed by definition name, plus the ABI slots.
struct Problem {
  const Task* task = nullptr;
  GqaLayout layout = GqaLayout::kPagedDecode;
  std::map<std::string, DeviceBuffer> buffers;
  std::vector<void*> pointers;  // one per tensor parameter, signature order
  std::vector<std::int64_t> axes;
  float sm_scale = 0;
  cudaStream_t stream = nullptr;
  std::vector<void*> params;  // invoke() convention: params[i] -> storage of parameter i
};

Status build_problem(const Task& task, cudaStream_t stream, Problem& p) {
  p.task = &task;
  p.stream = stream;
  const RunSignature signature = make_run_signature(task.definition);
  const auto axis_values = task.axis_values();
  std::uint64_t tensor_index = 0;
  p.pointers.reserve(signature.parameters.size());
  p.axes.reserve(signature.parameters.size());
  for (const AbiParameter& param : signature.parameters) {
    if (param.kind == AbiParameter::Kind::kAxis) {
      p.axes.push_back(axis_values.at(param.source_name));
      continue;
    }
    if (param.kind == AbiParameter::Kind::kStream || param.scalar) continue;
    const TensorSpec* spec = task.definition.find_tensor(param.source_name);
    std::int64_t count = 1;
    for (const auto& axis : *spec->shape) count *= axis_values.at(axis);
    const InputSpec* input = task.workload.find_input(param.source_name);
    DeviceBuffer buffer;
    if (input != nullptr && input->kind == InputSpec::Kind::kSafetensors) {
      PTXB_ASSIGN_OR_RETURN(
          SafetensorsTensor values,
          read_safetensors_tensor(task.set_root + "/" + input->path, input->tensor_key));
      if (values.elements() != count || values.dtype != spec->dtype)
        return make_error("io", "{}: {} has {} {} entries, the definition says {} {}", task.name,
                          param.source_name, values.elements(), dtype_name(values.dtype), count,
                          dtype_name(spec->dtype));
      PTXB_ASSIGN_OR_RETURN(buffer, DeviceBuffer::create(values.bytes.size()));
      PTXB_CUDA_CHECK(
          cudaMemcpy(buffer.data(), values.bytes.data(), buffer.bytes(), cudaMemcpyHostToDevice));
    } else {
      PTXB_ASSIGN_OR_RETURN(buffer, DeviceBuffer::create(spec->dtype, count));
      if (param.kind == AbiParameter::Kind::kInput)
        PTXB_RETURN_IF_ERROR(
            fill_normal(buffer.data(), spec->dtype, count, kSeed, tensor_index, stream));
    }
    ++tensor_index;
    p.pointers.push_back(buffer.data());
    p.buffers.emplace(param.source_name, std::move(buffer));
  }
  p.sm_scale = task.workload.find_input("sm_scale")->scalar_value.get<float>();
  // Slots in signature order (reserve() above keeps these addresses stable).
  std::size_t tensor = 0, axis = 0;
  for (const AbiParameter& param : signature.parameters) {
    if (param.kind == AbiParameter::Kind::kStream)
      p.params.push_back(&p.stream);
    else if (param.kind == AbiParameter::Kind::kAxis)
      p.params.push_back(&p.axes[axis++]);
    else if (param.scalar)
      p.params.push_back(&p.sm_scale);
    else
      p.params.push_back(&p.pointers[tensor++]);
  }
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return ok_status();
}

Result<double> median_call_ms(ReferenceBackend& backend, Problem& p, L2Flush& flush, int iters) {
  for (int i = 0; i < kWarmupCalls; ++i) {
    PTXB_RETURN_IF_ERROR(backend.prepare_call(p.params.data()));
    PTXB_RETURN_IF_ERROR(backend.invoke(p.params.data()));
  }
  PTXB_ASSIGN_OR_RETURN(EventTimer timer, EventTimer::create());
  std::vector<double> samples;
  for (int i = 0; i < iters; ++i) {
    PTXB_CUDA_CHECK(flush.flush(p.stream));
    PTXB_RETURN_IF_ERROR(backend.prepare_call(p.params.data()));  // a lookup by now
    PTXB_RETURN_IF_ERROR(timer.start(p.stream));
    PTXB_RETURN_IF_ERROR(backend.invoke(p.params.data()));
    PTXB_RETURN_IF_ERROR(timer.stop(p.stream));
    PTXB_ASSIGN_OR_RETURN(float ms, timer.elapsed_ms());
    samples.push_back(ms);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

template <typename T>
Result<std::vector<T>> download(const void* device, std::size_t count) {
  std::vector<T> host(count);
  PTXB_CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// Failing elements under the task rule (|x - ref| > atol and > rtol |ref|); -inf == -inf passes.
template <typename T>
std::int64_t failures(const std::vector<T>& got, const std::vector<float>& ref,
                      const Tolerance& tol, double& max_abs) {
  std::int64_t failing = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    float x;
    if constexpr (std::is_same_v<T, float>)
      x = got[i];
    else
      x = __bfloat162float(got[i]);
    if (x == ref[i]) continue;
    const double diff = std::fabs(static_cast<double>(x) - ref[i]);
    if (!std::isfinite(diff) || (diff > tol.atol && diff > tol.rtol * std::fabs(ref[i]))) ++failing;
    if (std::isfinite(diff)) max_abs = std::max(max_abs, diff);
  }
  return failing;
}

// FlashInfer's output (bf16) and LSE against the plain reference in fp32.
Result<bool> check_against_plain(ReferenceBackend& flashinfer, Problem& p) {
  auto* gqa = dynamic_cast<GqaReference*>(&flashinfer);
  PTXB_ASSIGN_OR_RETURN(GqaCall call, gqa->unpack(p.params.data()));
  const std::int64_t out_count = call.shape.total_q * call.shape.num_qo_heads * call.shape.head_dim;
  const std::int64_t lse_count = call.shape.total_q * call.shape.num_qo_heads;
  PTXB_ASSIGN_OR_RETURN(DeviceBuffer out_ref, DeviceBuffer::create(DType::kFloat32, out_count));
  PTXB_ASSIGN_OR_RETURN(DeviceBuffer lse_ref, DeviceBuffer::create(DType::kFloat32, lse_count));
  PTXB_RETURN_IF_ERROR(flashinfer.invoke(p.params.data()));
  GqaCall plain = call;
  plain.lse = lse_ref.as<float>();
  PTXB_RETURN_IF_ERROR(plain_gqa_attention(plain, out_ref.data(), DType::kFloat32));
  PTXB_CUDA_CHECK(cudaStreamSynchronize(p.stream));
  PTXB_ASSIGN_OR_RETURN(auto out, download<__nv_bfloat16>(call.output, out_count));
  PTXB_ASSIGN_OR_RETURN(auto lse, download<float>(call.lse, lse_count));
  PTXB_ASSIGN_OR_RETURN(auto ref_out, download<float>(out_ref.data(), out_count));
  PTXB_ASSIGN_OR_RETURN(auto ref_lse, download<float>(lse_ref.data(), lse_count));
  double out_max = 0, lse_max = 0;
  const std::int64_t out_bad = failures(out, ref_out, p.task->tolerance, out_max);
  const std::int64_t lse_bad = failures(lse, ref_lse, p.task->tolerance, lse_max);
  std::printf(
      "  check vs plain fp32: output %lld/%lld failing (max |err| %.3g), lse %lld/%lld "
      "failing (max |err| %.3g) -> %s\n",
      static_cast<long long>(out_bad), static_cast<long long>(out_count), out_max,
      static_cast<long long>(lse_bad), static_cast<long long>(lse_count), lse_max,
      out_bad + lse_bad == 0 ? "PASS" : "FAIL");
  return out_bad + lse_bad == 0;
}

Result<bool> bench_task(const Task& task, L2Flush& flush, cudaStream_t stream, int iters) {
  const std::string layout_name = task.reference_backend.substr(std::strlen("flashinfer_gqa_"));
  Problem p;
  PTXB_RETURN_IF_ERROR(build_problem(task, stream, p));
  std::printf("%s (%s, %.3g GFLOP)\n", task.name.c_str(), task.workload_name().c_str(),
              task.flops / 1e9);
  const bool causal = layout_name != "paged_decode";
  bool ok = true;
  for (const std::string& prefix :
       {std::string("flashinfer_gqa_"), std::string("plain_cuda_gqa_")}) {
    const std::string name = prefix + layout_name;
    if (prefix == std::string("flashinfer_gqa_") && !flashinfer_built()) {
      std::printf("  %-32s not built (configure with -DPTXB_WITH_FLASHINFER=ON)\n", name.c_str());
      continue;
    }
    PTXB_ASSIGN_OR_RETURN(auto backend, make_reference(name, causal));
    PTXB_ASSIGN_OR_RETURN(double ms, median_call_ms(*backend, p, flush, iters));
    std::printf("  %-32s median %9.4f ms  %8.2f TFLOP/s\n", name.c_str(), ms,
                task.flops / (ms * 1e-3) / 1e12);
    if (prefix == std::string("flashinfer_gqa_")) {
      const Json shapes = backend->describe()["shapes"];
      if (!shapes.empty()) std::printf("  plan: %s\n", shapes[0]["plan"].dump().c_str());
      PTXB_ASSIGN_OR_RETURN(bool passed, check_against_plain(*backend, p));
      ok = ok && passed;
    }
  }
  return ok;
}

int run(int argc, char** argv) {
  std::string tasks_dir, only;
  int iters = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--tasks")
      tasks_dir = argv[i + 1];
    else if (flag == "--iters")
      iters = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--only")
      only = argv[i + 1];
  }
  if (tasks_dir.empty()) {
    auto dir = builtin_tasks_dir();
    if (!dir.ok()) return std::fprintf(stderr, "%s\n", dir.error().message.c_str()), 2;
    tasks_dir = *dir;
  }
  auto registry = TaskRegistry::load_sets({tasks_dir});
  if (!registry.ok()) return std::fprintf(stderr, "%s\n", registry.error().message.c_str()), 2;
  cudaStream_t stream = nullptr;
  L2Flush flush;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
      !flush.allocate_for_current_device().ok())
    return std::fprintf(stderr, "gqa_reference_bench: no usable GPU\n"), 2;
  bool all_ok = true;
  for (const Task* task : registry->list("heldout-h100")) {
    if (!task->reference_backend.starts_with("flashinfer_gqa_")) continue;
    if (!only.empty() && task->name != only) continue;
    auto ok = bench_task(*task, flush, stream, iters);
    if (!ok.ok()) {
      std::printf("  ERROR: %s\n", ok.error().message.c_str());
      all_ok = false;
    } else {
      all_ok = all_ok && *ok;
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return run(argc, argv);
}
