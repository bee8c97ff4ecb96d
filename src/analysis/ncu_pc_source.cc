#include "analysis/ncu_pc_source.h"

#include <algorithm>
#include <map>

#include "core/strings.h"

namespace ptxb {
namespace {

// The listing's instructions of one function as source lines with zero counts.
Result<NcuKernelSource> empty_source(const std::string& name,
                                     const std::vector<SassInstruction>& instructions) {
  NcuKernelSource kernel{name, {}};
  kernel.lines.reserve(instructions.size());
  for (const SassInstruction& instruction : instructions) {
    NcuSourceLine line;
    line.address = fmt::format("{:#x}", instruction.offset);
    PTXB_RETURN_IF_ERROR(parse_sass_text(instruction.text, line));
    line.inst_executed = 0;
    line.thread_inst_executed_true = 0;
    kernel.lines.push_back(std::move(line));
  }
  return kernel;
}

// Index of the instruction at `offset`, or npos.
std::size_t index_of_offset(const std::vector<SassInstruction>& instructions,
                            std::uint64_t offset) {
  auto it = std::lower_bound(
      instructions.begin(), instructions.end(), offset,
      [](const SassInstruction& instruction, std::uint64_t o) { return instruction.offset < o; });
  if (it == instructions.end() || it->offset != offset) return std::string::npos;
  return static_cast<std::size_t>(it - instructions.begin());
}

// Adds one launch's counts to `kernel` (maximum per instruction) and checks its per-opcode sums
// against ncu's.
Status add_launch(const NcuLaunch& launch, const std::vector<SassInstruction>& instructions,
                  NcuKernelSource& kernel) {
  if (launch.thread_true_by_pc.empty() || launch.inst_executed_by_pc.empty())
    return make_error("ncu", "no per-address source counters for {} on the raw page", launch.name);
  const std::uint64_t entry = launch.inst_executed_by_pc.begin()->first;
  std::map<std::string, std::int64_t> by_opcode;
  for (const auto& [pc, issued] : launch.inst_executed_by_pc) {
    const std::size_t index = index_of_offset(instructions, pc - entry);
    if (index == std::string::npos)
      return make_error("ncu",
                        "{}: address {:#x} (offset {:#x}) is not an instruction of the cubin's "
                        "listing",
                        launch.name, pc, pc - entry);
    NcuSourceLine& line = kernel.lines[index];
    auto thread = launch.thread_true_by_pc.find(pc);
    const std::int64_t threads = thread == launch.thread_true_by_pc.end() ? 0 : thread->second;
    line.inst_executed = std::max(*line.inst_executed, issued);
    line.thread_inst_executed_true = std::max(*line.thread_inst_executed_true, threads);
    by_opcode[line.base_opcode] += threads;
  }
  for (const auto& [pc, threads] : launch.thread_true_by_pc)
    if (launch.inst_executed_by_pc.count(pc) == 0 && threads > 0)
      return make_error("ncu", "{}: address {:#x} ran threads but was never issued", launch.name,
                        pc);
  if (launch.thread_true_by_opcode.empty())
    return make_error("ncu", "{}: the raw page has no {} to check the address mapping against",
                      launch.name, kNcuThreadTruePerOpcode);
  // ncu's sums list opcodes with a zero total too; compare the non-zero ones both ways.
  std::map<std::string, std::int64_t> reported;
  for (const auto& [opcode, threads] : launch.thread_true_by_opcode)
    if (threads != 0) reported[opcode] = threads;
  std::erase_if(by_opcode, [](const auto& entry) { return entry.second == 0; });
  if (reported != by_opcode) {
    for (const auto& [opcode, threads] : reported) {
      auto mapped = by_opcode.find(opcode);
      const std::int64_t ours = mapped == by_opcode.end() ? 0 : mapped->second;
      if (ours != threads)
        return make_error("ncu",
                          "{}: the addresses mapped onto the cubin's listing give {} {} thread "
                          "instructions, ncu counted {} on the code that ran",
                          launch.name, ours, opcode, threads);
    }
    return make_error("ncu", "{}: the mapped listing has opcodes ncu did not count", launch.name);
  }
  return ok_status();
}

}  // namespace

Result<std::vector<NcuKernelSource>> source_from_pc_counts(const std::vector<NcuLaunch>& launches,
                                                           const SassListing& listing) {
  std::vector<NcuKernelSource> kernels;
  std::map<std::string, std::size_t> index_of_name;
  for (const NcuLaunch& launch : launches) {
    auto function = listing.find(launch.name);
    if (function == listing.end())
      return make_error("ncu", "profiled kernel {} is not a function of the cubin's listing",
                        launch.name);
    auto [slot, inserted] = index_of_name.emplace(launch.name, kernels.size());
    if (inserted) {
      PTXB_ASSIGN_OR_RETURN(NcuKernelSource kernel, empty_source(launch.name, function->second));
      kernels.push_back(std::move(kernel));
    }
    PTXB_RETURN_IF_ERROR(add_launch(launch, function->second, kernels[slot->second]));
  }
  if (kernels.empty()) return make_error("ncu", "the raw page lists no profiled launch");
  return kernels;
}

}  // namespace ptxb
