#include "packs/prompt_builder.h"

#include <fmt/format.h>

#include "abi/signature.h"
#include "core/strings.h"
#include "packs/token_estimate.h"

namespace ptxb {
namespace {

PromptSize size_of(const std::string& text) {
  return {text.size(), approx_tokens(text)};
}

// Role and response format. The extraction rule (one ```cuda block) is what the agent's kernel
// extractor relies on; the wording asks for exactly that so a model never has to guess.
constexpr const char* kRole =
    R"(You are an expert CUDA and PTX engineer. You write one complete, self-contained CUDA C++ source file, `kernel.cu`, that implements the task given in the user message as fast as possible on the GPU described below, using the architecture-specific PTX instructions this knowledge pack documents (through inline `asm volatile`).

# Response format

- Answer with exactly ONE fenced code block tagged `cuda` (```cuda ... ```) holding the whole `kernel.cu`. Text outside the block is allowed but is not compiled; do not split the file over several blocks and do not send a diff.
- The file must compile on its own: every kernel, device function, helper and the host function `run` are in it (or in the wrapper headers of the knowledge pack, which you may `#include`).
- Do not write binding code: no `main`, no Python/PyTorch extension, no `extern "C"` wrapper, no `PYBIND11_MODULE`. The harness generates the `extern "C"` trampoline that calls your `run`.
- Each later user message reports how the previous kernel compiled, ran, compared and performed. Answer it with a complete revised file in the same format.
)";

// design.md §3.2 in the model's terms. Kept next to the signature so the model reads the rules and
// the exact declaration together.
constexpr const char* kAbiRules = R"(# Solution ABI (the rules every kernel is judged by)

Entry point. Define exactly this host function (same name, parameter types, order and names), at namespace scope in `kernel.cu`:

```cuda
{signature};
```

Parameters: every input in definition order (`const T*`, or `T` by value for a scalar input), every output in order (`T*`), every axis of the definition in order as `int64_t`, then the stream. Types: bfloat16 = `__nv_bfloat16`, float16 = `__half`, float32 = `float`, int32 = `int32_t`, int64 = `int64_t`, float8_e4m3fn = `__nv_fp8_e4m3`, bool = `bool`.

Memory. Every tensor is contiguous, row-major (the last axis of its shape varies fastest), resident in device memory, and its base address is 256-byte aligned. Outputs are pre-allocated by the harness and filled with a poison pattern before each call: your kernels must write every element of every output on every call. Inputs must not be modified.

Streams. All GPU work must be enqueued on `stream` before `run` returns; `run` may return before the work finishes. A kernel launched on any other stream, the legacy default stream included, is a violation. Synchronous copies and memsets on the legacy stream are tolerated but counted in your time. Do not launch on streams of your own, and avoid `cudaDeviceSynchronize` (it only adds time).

Scratch memory. Allocate with `cudaMallocAsync(..., stream)`/`cudaFreeAsync`, or keep a buffer across calls (for example a static pointer grown on demand). Caching *results* across calls is forbidden: the harness rewrites inputs between calls and checks the outputs.

Headers and libraries. Allowed: C/C++ standard headers; `cuda_runtime.h`, `cuda.h` (driver API, e.g. `cuTensorMapEncodeTiled` for TMA descriptors; reach it through `cudaGetDriverEntryPoint` or call it directly); `cuda_bf16.h`, `cuda_fp16.h`, `cuda_fp8.h`; cooperative groups; libcu++ (`cuda/std/*`, `cuda/barrier`, `cuda/pipeline`, `cuda/ptx`); the wrapper headers of this knowledge pack. Forbidden: cuBLAS/cuBLASLt, cuDNN, CUTLASS/CuTe, CUB, Thrust, cuFFT/cuSPARSE/cuSOLVER, NVRTC, nvJitLink, any other library; loading modules or libraries at run time (`cuModuleLoad*`, `cuLibraryLoad*`, `cudaLibraryLoad*`, the linker APIs, `dlopen`/`dlsym`); spawning processes; sockets. A forbidden header or symbol fails the turn before it runs.

Judging. Correctness first: an output element fails when |x − ref| > atol and |x − ref| > rtol·|ref|; one failing element, a NaN or an Inf fails the task. Then target instructions: the listed instruction families must be present in the SASS of your kernels and actually execute on the evaluated workload (checked with a profiler). Then speed: median device time of all work your `run` enqueues, L2 flushed before each sample, against the library reference on the same GPU.
)";

std::string workload_line(const PromptTask& task) {
  std::vector<std::string> parts;
  if (!task.axis_values.empty()) {
    for (const auto& [name, value] : task.axis_values) {
      const Axis* axis = task.definition.find_axis(name);
      const char* kind = axis && axis->is_var ? "var" : "const";
      parts.push_back(fmt::format("{} = {} ({})", name, value, kind));
    }
  } else {
    for (const auto& axis : task.definition.axes)
      if (axis.value) parts.push_back(fmt::format("{} = {} (const)", axis.name, *axis.value));
  }
  return join(parts, ", ");
}

std::string tensor_shape_text(const PromptTask& task, const TensorSpec& tensor) {
  if (tensor.is_scalar()) return "scalar";
  std::vector<std::string> dims;
  for (const auto& axis_name : *tensor.shape) {
    std::string dim = axis_name;
    for (const auto& [name, value] : task.axis_values)
      if (name == axis_name) dim = fmt::format("{}={}", axis_name, value);
    dims.push_back(dim);
  }
  return "[" + join(dims, ", ") + "]";
}

std::string first_user_message(const PromptTask& task, const std::string& signature) {
  const Definition& def = task.definition;
  std::string text = fmt::format("# Task: {}\n\n", def.name);
  text +=
      "The operator, as a FlashInfer-Trace definition (the `reference` field is the "
      "specification; match it):\n\n```json\n";
  text += dump_pretty(definition_for_prompt(def));
  text += "```\n\n";
  text += fmt::format("Evaluated workload: {}.\n", workload_line(task));
  std::vector<std::string> tensors;
  for (const auto& tensor : def.inputs)
    tensors.push_back(fmt::format("input {} {}", tensor.name, tensor_shape_text(task, tensor)));
  for (const auto& tensor : def.outputs)
    tensors.push_back(fmt::format("output {} {}", tensor.name, tensor_shape_text(task, tensor)));
  text += fmt::format("Tensors (row-major, contiguous): {}.\n\n", join(tensors, "; "));
  text += fmt::format(
      "Tolerance: atol = {:g}, rtol = {:g} (an element fails when |x − ref| > atol and "
      "|x − ref| > rtol·|ref|).\n",
      task.atol, task.rtol);
  const std::string reference = task.reference.empty() ? "the library reference" : task.reference;
  text += fmt::format(
      "Target: a correct kernel whose target instructions execute, at least {:g}× faster than "
      "{} on this workload (speedup = reference median time / your median time).\n\n",
      task.target_speedup, reference);
  text += fmt::format("Implement:\n\n```cuda\n{};\n```\n\n", signature);
  text += "Reply with the complete `kernel.cu` in one ```cuda block.\n";
  return text;
}

}  // namespace

Json definition_for_prompt(const Definition& definition) {
  Json document = definition.raw;
  if (document.is_object()) document.erase("tags");
  return document;
}

Result<Prompt> build_prompt(const PackLibrary& library, const PromptTask& task,
                            const std::string& variant) {
  PTXB_ASSIGN_OR_RETURN(ComposedPack pack, library.compose(task.arch, variant));
  PTXB_ASSIGN_OR_RETURN(ArchitecturePack arch, library.pack_for_arch(task.arch));
  if (!task.definition.raw.is_object())
    return make_error("validation", "task {}: definition document is missing",
                      task.definition.name);
  const std::string signature = make_run_signature(task.definition).declaration();

  Prompt prompt;
  prompt.arch = task.arch;
  prompt.pack = pack.pack;
  prompt.variant = variant;
  prompt.system = kRole;
  prompt.system += fmt::format("\n# Target GPU: {} ({})\n\n", arch.title, arch.arch);
  if (!arch.target_note.empty()) prompt.system += arch.target_note + "\n";
  prompt.system += fmt::format(
      "\n# Knowledge pack ({}, variant \"{}\")\n\nReference material for this GPU. Facts carry "
      "their source in brackets; the wrapper headers are verified and may be included as "
      "shown.\n\n",
      pack.pack, variant);
  prompt.system += pack.text;
  prompt.system += "\n";
  prompt.system += replace_all(kAbiRules, "{signature}", signature);
  prompt.first_user = first_user_message(task, signature);

  prompt.fragments = std::move(pack.fragments);
  prompt.warnings = std::move(pack.warnings);
  prompt.system_size = size_of(prompt.system);
  prompt.first_user_size = size_of(prompt.first_user);
  prompt.pack_size = size_of(pack.text);
  prompt.total_size = {
      prompt.system_size.bytes + prompt.first_user_size.bytes,
      approx_tokens_for_bytes(prompt.system_size.bytes + prompt.first_user_size.bytes)};
  return prompt;
}

Json prompt_to_json(const Prompt& prompt) {
  auto size_json = [](const PromptSize& size) {
    return Json{{"bytes", size.bytes}, {"approx_tokens", size.approx_tokens}};
  };
  Json fragments = Json::array();
  for (const auto& fragment : prompt.fragments)
    fragments.push_back(Json{{"name", fragment.name},
                             {"bytes", fragment.bytes},
                             {"approx_tokens", approx_tokens_for_bytes(fragment.bytes)},
                             {"sources", fragment.sources}});
  return Json{{"arch", prompt.arch},
              {"pack", prompt.pack},
              {"variant", prompt.variant},
              {"token_method", "approximate: ceil(bytes / 3.5)"},
              {"sizes",
               {{"system", size_json(prompt.system_size)},
                {"first_user", size_json(prompt.first_user_size)},
                {"knowledge_pack", size_json(prompt.pack_size)},
                {"total", size_json(prompt.total_size)}}},
              {"fragments", fragments},
              {"warnings", prompt.warnings},
              {"system", prompt.system},
              {"first_user", prompt.first_user}};
}

}  // namespace ptxb
