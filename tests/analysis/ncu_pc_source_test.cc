// The per-address source counters of the raw page mapped onto the cubin's listing
// (analysis/ncu_pc_source.h). Golden inputs: the probe of bench/ncu_passes.sh profiled on the H200
// (ncu 2025.3.1, 2026-12-03: raw page with --print-metric-instances details, columns trimmed to
// the ones read, and its cuobjdump -sass listing), and the source pages of ncu_source_test.cc
// rewritten as a listing plus address lists, which must give the same verdicts both ways.
#include "analysis/ncu_pc_source.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/fs.h"

namespace ptxb {
namespace {

std::string read_pc_sample(const std::string& name) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/eval/ncu/" + name, 16u << 20);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : std::string();
}

struct PcProbe {
  SassListing listing;
  std::vector<NcuLaunch> launches;
};

PcProbe read_pc_probe() {
  PcProbe probe;
  auto listing = parse_sass_listing(read_pc_sample("probe_h200.sass"), "sm_90a", "probe.sass");
  EXPECT_TRUE(listing.ok());
  if (listing.ok()) probe.listing = *listing;
  auto launches = parse_ncu_launches_csv(read_pc_sample("raw_h200_probe_instances.csv"), "raw.csv");
  EXPECT_TRUE(launches.ok()) << (launches.ok() ? "" : launches.error().message);
  if (launches.ok()) probe.launches = *launches;
  return probe;
}

TEST(NcuPcSource, TheRealProbeMapsOntoItsListingAndAgreesWithNcu) {
  const PcProbe probe = read_pc_probe();
  ASSERT_EQ(probe.launches.size(), 3u);
  const NcuLaunch& first = probe.launches[0];
  EXPECT_EQ(first.inst_executed_by_pc.size(), 83u);  // issued instructions only
  EXPECT_EQ(first.inst_executed_by_pc.begin()->first, 0x7f2cbf7a0000u);
  EXPECT_EQ(first.thread_true_by_opcode.at("FFMA"), 68'719'476'736);
  auto kernels = source_from_pc_counts(probe.launches, probe.listing);
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  ASSERT_EQ(kernels->size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const NcuKernelSource& kernel = (*kernels)[i];
    EXPECT_EQ(kernel.name, probe.launches[i].name);
    EXPECT_EQ(kernel.lines.size(), probe.listing.at(kernel.name).size());
    // The FFMA lines' predicated-on threads are ncu's own FFMA counter, and the guarded EXIT
    // that no thread took reads (issued, 0).
    std::int64_t ffma = 0;
    for (const NcuSourceLine& line : kernel.lines)
      if (line.base_opcode == "FFMA") ffma += *line.thread_inst_executed_true;
    EXPECT_EQ(ffma,
              probe.launches[i].metrics.at("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
    EXPECT_EQ(kernel.lines[7].text, "@P0 EXIT");
    EXPECT_GT(*kernel.lines[7].inst_executed, 0);
    EXPECT_EQ(*kernel.lines[7].thread_inst_executed_true, 0);
  }
  EXPECT_EQ(decide_dynamic(*kernels, "sm_90a").verdict, kDynamicNotExecuted);
}

TEST(NcuPcSource, CodeOtherThanTheListingsIsRejected) {
  PcProbe probe = read_pc_probe();
  // Another kernel of the same name whose instructions differ: ncu's per-opcode sums (from the
  // code that ran) disagree with the listing's.
  PcProbe foreign = probe;
  std::swap(foreign.listing.at("_Z4workILi1EEvPfi")[20].text,
            foreign.listing.at("_Z4workILi1EEvPfi")[7].text);
  auto mapped = source_from_pc_counts(foreign.launches, foreign.listing);
  ASSERT_FALSE(mapped.ok());
  EXPECT_NE(mapped.error().message.find("ncu counted"), std::string::npos)
      << mapped.error().message;
  // An address between two instructions, or past the function's end.
  PcProbe shifted = probe;
  NcuLaunch& launch = shifted.launches[0];
  launch.inst_executed_by_pc[launch.inst_executed_by_pc.begin()->first + 0x8] = 1;
  mapped = source_from_pc_counts(shifted.launches, shifted.listing);
  ASSERT_FALSE(mapped.ok());
  EXPECT_NE(mapped.error().message.find("offset 0x8"), std::string::npos) << mapped.error().message;
  // A kernel missing from the listing, and a launch without per-address counters.
  PcProbe renamed = probe;
  renamed.launches[0].name = "_Z5otherv";
  EXPECT_FALSE(source_from_pc_counts(renamed.launches, renamed.listing).ok());
  PcProbe bare = probe;
  bare.launches[0].inst_executed_by_pc.clear();
  EXPECT_FALSE(source_from_pc_counts(bare.launches, bare.listing).ok());
}

// A source page (absolute addresses, every instruction) rewritten as what the raw page and
// the listing carry: offsets from the first address, and address lists of the issued lines.
void page_as_listing_and_launches(const std::vector<NcuKernelSource>& page, SassListing& listing,
                                  std::vector<NcuLaunch>& launches) {
  for (std::size_t k = 0; k < page.size(); ++k) {
    const std::string name = "kernel" + std::to_string(k);
    NcuLaunch launch;
    launch.name = name;
    std::vector<SassInstruction>& instructions = listing[name];
    const std::uint64_t entry = std::stoull(page[k].lines.front().address, nullptr, 16);
    for (const NcuSourceLine& line : page[k].lines) {
      const std::uint64_t pc = std::stoull(line.address, nullptr, 16);
      instructions.push_back(SassInstruction{pc - entry, line.text});
      if (line.inst_executed.value_or(0) == 0) continue;
      launch.inst_executed_by_pc[pc] = *line.inst_executed;
      launch.thread_true_by_pc[pc] = line.thread_inst_executed_true.value_or(0);
      launch.thread_true_by_opcode[line.base_opcode] += line.thread_inst_executed_true.value_or(0);
    }
    std::sort(instructions.begin(), instructions.end(),
              [](const auto& a, const auto& b) { return a.offset < b.offset; });
    launches.push_back(std::move(launch));
  }
}

TEST(NcuPcSource, TheGoldenSourcePagesGiveTheSameVerdictsThroughAddresses) {
  for (const std::string name : {"wgmma_live.csv", "wgmma_dead_branch.csv", "wgmma_pred_off.csv"}) {
    auto page = parse_ncu_source_csv(read_pc_sample(name), name);
    ASSERT_TRUE(page.ok()) << name;
    SassListing listing;
    std::vector<NcuLaunch> launches;
    page_as_listing_and_launches(*page, listing, launches);
    auto mapped = source_from_pc_counts(launches, listing);
    ASSERT_TRUE(mapped.ok()) << name << ": " << mapped.error().message;
    const DynamicCheck from_page = decide_dynamic(*page, "sm_90a");
    const DynamicCheck from_addresses = decide_dynamic(*mapped, "sm_90a");
    EXPECT_EQ(from_addresses.verdict, from_page.verdict) << name;
    EXPECT_EQ(from_addresses.executed_families, from_page.executed_families) << name;
    for (const auto& [family, counts] : from_page.families) {
      EXPECT_EQ(from_addresses.families.at(family).executed_lines, counts.executed_lines) << name;
      EXPECT_EQ(from_addresses.families.at(family).placeholder_lines, counts.placeholder_lines)
          << name;
      EXPECT_EQ(from_addresses.families.at(family).thread_inst_executed_true,
                counts.thread_inst_executed_true)
          << name;
    }
  }
}

}  // namespace
}  // namespace ptxb
