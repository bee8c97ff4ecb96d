// Dynamic target-instruction check. Golden inputs: real `ncu --page source --csv --print-source
// sass --metrics inst_executed,thread_inst_executed_true` output (ncu 2025.3, H200, 2026-11-29)
// in testdata/eval/ncu/; the other cases are handcrafted in the same format.
#include "analysis/ncu_source.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

std::string read_sample(const std::string& name) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/eval/ncu/" + name, 16u << 20);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message);
  return text.ok() ? *text : std::string();
}

std::vector<NcuKernelSource> parse_sample(const std::string& name) {
  auto kernels = parse_ncu_source_csv(read_sample(name), name);
  EXPECT_TRUE(kernels.ok()) << (kernels.ok() ? "" : kernels.error().message);
  return kernels.ok() ? *kernels : std::vector<NcuKernelSource>{};
}

std::vector<NcuKernelSource> parse_text(const std::string& text) {
  auto kernels = parse_ncu_source_csv(text, "handmade.csv");
  EXPECT_TRUE(kernels.ok()) << (kernels.ok() ? "" : kernels.error().message);
  return kernels.ok() ? *kernels : std::vector<NcuKernelSource>{};
}

// A kernel section as ncu 2025.3 prints it (note the trailing comma after the name).
std::string section(const std::string& kernel, const std::vector<std::string>& rows) {
  std::string text = "\"Kernel Name\",\"" + kernel + "\",\n" +
                     "\"Address\",\"Source\",\"inst_executed\",\"thread_inst_executed_true\"\n";
  for (const auto& row : rows) text += row + "\n";
  return text;
}

std::string row(const std::string& address, const std::string& source, const std::string& inst,
                const std::string& threads) {
  return "\"" + address + "\",\"      " + source + "\",\"" + inst + "\",\"" + threads + "\"";
}

const FamilyDynamicCounts& family(const DynamicCheck& check, const std::string& name) {
  static const FamilyDynamicCounts kNone{};
  auto found = check.families.find(name);
  return found == check.families.end() ? kNone : found->second;
}

const NcuKernelSource* find_kernel(const std::vector<NcuKernelSource>& kernels,
                                   const std::string& name) {
  for (const auto& kernel : kernels)
    if (kernel.name == name) return &kernel;
  return nullptr;
}

TEST(NcuSource, LiveWgmmaIsPresent) {
  const auto kernels = parse_sample("wgmma_live.csv");
  ASSERT_EQ(kernels.size(), 2u);
  const NcuKernelSource* probe = find_kernel(kernels, "<unnamed>::wgmma_probe_kernel(int)");
  ASSERT_NE(probe, nullptr);
  const NcuSourceLine* hgmma = nullptr;
  for (const auto& line : probe->lines)
    if (line.base_opcode == "HGMMA") hgmma = &line;
  ASSERT_NE(hgmma, nullptr);
  EXPECT_EQ(hgmma->address, "0x7ff6e97a2430");
  EXPECT_EQ(hgmma->opcode, "HGMMA.64x8x16.F32.BF16");
  EXPECT_EQ(hgmma->text, "HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0");
  EXPECT_EQ(hgmma->inst_executed, 4);
  EXPECT_EQ(hgmma->thread_inst_executed_true, 128);
  EXPECT_FALSE(hgmma->predicated);
  EXPECT_FALSE(hgmma->placeholder);

  const DynamicCheck check = decide_dynamic(kernels, "sm_90a");
  EXPECT_EQ(check.verdict, kDynamicPresent) << check.reason;
  EXPECT_EQ(check.executed_families, std::vector<std::string>{"GMMA"});
  EXPECT_EQ(family(check, "GMMA").static_lines, 1);
  EXPECT_EQ(family(check, "GMMA").executed_lines, 1);
  EXPECT_EQ(family(check, "GMMA").inst_executed, 4);
  EXPECT_EQ(family(check, "GMMA").thread_inst_executed_true, 128);
  EXPECT_EQ(family(check, "GMMA").placeholder_lines, 0);
}

// ncu 2025.3 printed every section twice for one launch: 912 rows, 456 distinct addresses.
TEST(NcuSource, DuplicateSectionsAreCountedOnce) {
  const auto kernels = parse_sample("wgmma_live.csv");
  std::size_t lines = 0;
  for (const auto& kernel : kernels) lines += kernel.lines.size();
  EXPECT_EQ(lines, 456u);
  const NcuKernelSource* probe = find_kernel(kernels, "<unnamed>::wgmma_probe_kernel(int)");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->lines.size(), 56u);

  // Same kernel, same address: the maximum, never the sum.
  const std::string hgmma = "HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0";
  const auto merged = parse_text(section("k", {row("0x10", hgmma, "4", "128")}) +
                                 section("k", {row("0x10", hgmma, "4", "128")}));
  ASSERT_EQ(merged.size(), 1u);
  ASSERT_EQ(merged[0].lines.size(), 1u);
  EXPECT_EQ(family(decide_dynamic(merged, "sm_90a"), "GMMA").thread_inst_executed_true, 128);
}

TEST(NcuSource, DeadBranchWgmmaIsNotExecuted) {
  const DynamicCheck check = decide_dynamic(parse_sample("wgmma_dead_branch.csv"), "sm_90a");
  EXPECT_EQ(check.verdict, kDynamicNotExecuted) << check.reason;
  EXPECT_TRUE(check.executed_families.empty());
  EXPECT_EQ(family(check, "GMMA").static_lines, 1);
  EXPECT_EQ(family(check, "GMMA").executed_lines, 0);
  EXPECT_EQ(family(check, "GMMA").thread_inst_executed_true, 0);
}

// The false-guard wgmma: the real HGMMA is branched around (0, 0) and ptxas's placeholder
// `HGMMA.64x8x16.F16 RZ, gdesc[URZ], ...` executes (4, 128) but computes nothing.
TEST(NcuSource, PredicateOffWgmmaPlaceholderDoesNotCount) {
  const auto kernels = parse_sample("wgmma_pred_off.csv");
  const NcuKernelSource* probe = find_kernel(kernels, "<unnamed>::wgmma_probe_kernel(int)");
  ASSERT_NE(probe, nullptr);
  int placeholders = 0;
  for (const auto& line : probe->lines) {
    if (!line.placeholder) continue;
    ++placeholders;
    EXPECT_EQ(line.text, "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0");
    EXPECT_EQ(line.thread_inst_executed_true, 128);
  }
  EXPECT_EQ(placeholders, 1);

  const DynamicCheck check = decide_dynamic(kernels, "sm_90a");
  EXPECT_EQ(check.verdict, kDynamicNotExecuted) << check.reason;
  EXPECT_EQ(family(check, "GMMA").placeholder_lines, 1);
  EXPECT_EQ(family(check, "GMMA").static_lines, 1);
  EXPECT_EQ(family(check, "GMMA").thread_inst_executed_true, 0);
  EXPECT_NE(check.reason.find("placeholder"), std::string::npos) << check.reason;
}

// The profiled program crashed: ncu printed its errors and the SASS without metric columns. The
// SASS parses, but a profile without counts proves nothing either way: "unknown".
TEST(NcuSource, CrashedProgramProfileIsUnknown) {
  const auto kernels = parse_sample("oob_crash.csv");
  ASSERT_EQ(kernels.size(), 2u);
  for (const auto& kernel : kernels)
    for (const auto& line : kernel.lines) {
      EXPECT_FALSE(line.inst_executed.has_value()) << line.address;
      EXPECT_FALSE(line.thread_inst_executed_true.has_value()) << line.address;
    }
  const DynamicCheck check = decide_dynamic(kernels, "sm_90a");
  EXPECT_EQ(check.verdict, kDynamicUnknown) << check.reason;
  EXPECT_EQ(family(check, "GMMA").unmeasured_lines, 1);
  EXPECT_TRUE(check.executed_families.empty());
}

TEST(NcuSource, EmptyOrForeignTextIsAnError) {
  for (const std::string text :
       {"", "\n\n", "==PROF== Connected to process 1\n==ERROR== LaunchFailed\n",
        "hello world\nthis is not a profile\n"}) {
    auto kernels = parse_ncu_source_csv(text, "x.csv");
    ASSERT_FALSE(kernels.ok()) << text;
    EXPECT_NE(kernels.error().message.find("x.csv"), std::string::npos);
  }
  auto orphan = parse_ncu_source_csv("==PROF== hi\n\"a\",\"b\"\n", "x.csv");
  ASSERT_FALSE(orphan.ok());
  EXPECT_NE(orphan.error().message.find("x.csv:2:"), std::string::npos) << orphan.error().message;

  auto bad_count = parse_ncu_source_csv(section("k", {row("0x10", "NOP", "4", "lots")}), "x.csv");
  ASSERT_FALSE(bad_count.ok());
  EXPECT_NE(bad_count.error().message.find("x.csv:3:"), std::string::npos)
      << bad_count.error().message;

  auto unterminated = parse_ncu_source_csv(section("k", {"\"0x10\",\"NOP"}), "x.csv");
  ASSERT_FALSE(unterminated.ok());
  EXPECT_NE(unterminated.error().message.find("x.csv:3: unterminated"), std::string::npos)
      << unterminated.error().message;

  auto no_header =
      parse_ncu_source_csv("\"Kernel Name\",\"k\",\n\"0x10\",\"NOP\",\"1\",\"32\"\n", "x.csv");
  ASSERT_FALSE(no_header.ok());
  EXPECT_NE(no_header.error().message.find("x.csv:2:"), std::string::npos);
}

TEST(NcuSource, ThousandsSeparatorsAndProgramOutputAreAccepted) {
  const auto kernels =
      parse_text("ptxbench-runner: self-contained call completed\n" +
                 section("k", {row("0x10", "HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24, gsb0",
                                   "1,792", "57,344")}));
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_EQ(kernels[0].lines.size(), 1u);
  EXPECT_EQ(kernels[0].lines[0].inst_executed, 1792);
  EXPECT_EQ(kernels[0].lines[0].thread_inst_executed_true, 57344);
}

// Issued with the guard predicate false on every thread: (4, 0) does not count.
TEST(NcuSource, PredicateFalseLineIsNotExecuted) {
  const auto kernels = parse_text(section(
      "k", {row("0x10", "@P0   HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0", "4", "0"),
            row("0x20", "@PT   NOP", "4", "128")}));
  ASSERT_EQ(kernels[0].lines.size(), 2u);
  EXPECT_TRUE(kernels[0].lines[0].predicated);
  EXPECT_EQ(kernels[0].lines[0].opcode, "HGMMA.64x8x16.F32.BF16");
  EXPECT_FALSE(kernels[0].lines[1].predicated);  // @PT is always true
  const DynamicCheck check = decide_dynamic(kernels, "sm_90a");
  EXPECT_EQ(check.verdict, kDynamicNotExecuted) << check.reason;
  EXPECT_EQ(family(check, "GMMA").inst_executed, 4);
  EXPECT_EQ(family(check, "GMMA").thread_inst_executed_true, 0);
}

TEST(NcuSource, BlackwellCountsUtcNotGmma) {
  const auto utc = parse_text(
      section("k", {row("0x10",
                        "UTCHMMA gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], idesc[UR11], "
                        "UPT",
                        "1", "32"),
                    row("0x20", "LDTM.x16 R4, tmem[UR4]", "4", "0")}));
  const DynamicCheck present = decide_dynamic(utc, "sm_100a");
  EXPECT_EQ(present.verdict, kDynamicPresent) << present.reason;
  EXPECT_EQ(present.executed_families, std::vector<std::string>{"UTC"});
  EXPECT_EQ(family(present, "LDTM").static_lines, 1);
  EXPECT_EQ(family(present, "LDTM").executed_lines, 0);

  // An executed HGMMA does not qualify a Blackwell kernel.
  const auto gmma = parse_text(section(
      "k", {row("0x10", "HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0", "4", "128")}));
  const DynamicCheck absent = decide_dynamic(gmma, "sm_100a");
  EXPECT_EQ(absent.verdict, kDynamicNotExecuted) << absent.reason;
  EXPECT_NE(absent.reason.find("hold no"), std::string::npos) << absent.reason;
  EXPECT_EQ(family(absent, "GMMA").thread_inst_executed_true, 128);  // still recorded
}

TEST(NcuSource, TmaLoadCountsPrefetchDoesNot) {
  const auto load = parse_text(section("k", {row("0x10", "@!P0 UTMALDG.2D [UR8], [UR4]", "4", "1"),
                                             row("0x20", "UTMAPF.L2.2D [UR4]", "4", "32")}));
  const DynamicCheck present = decide_dynamic(load, "sm_90a");
  EXPECT_EQ(present.verdict, kDynamicPresent) << present.reason;
  EXPECT_EQ(present.executed_families, std::vector<std::string>{"TMA"});
  EXPECT_EQ(family(present, "TMA").static_lines, 1);

  const auto prefetch = parse_text(section("k", {row("0x20", "UTMAPF.L2.2D [UR4]", "4", "32")}));
  const DynamicCheck absent = decide_dynamic(prefetch, "sm_90a");
  EXPECT_EQ(absent.verdict, kDynamicNotExecuted) << absent.reason;
  EXPECT_TRUE(absent.families.empty());
}

// A qualifying line without counts while others have them: cannot prove it did not run.
TEST(NcuSource, UnmeasuredQualifyingLineIsUnknown) {
  const auto kernels = parse_text(
      section("k", {row("0x10", "NOP", "4", "128"),
                    "\"0x20\",\"      HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0\""}));
  const DynamicCheck check = decide_dynamic(kernels, "sm_90a");
  EXPECT_EQ(check.verdict, kDynamicUnknown) << check.reason;
  EXPECT_EQ(family(check, "GMMA").unmeasured_lines, 1);
}

TEST(NcuSource, UnknownArchitectureAndProfilerFailureAreNeverPositive) {
  const auto kernels = parse_sample("wgmma_live.csv");
  EXPECT_EQ(decide_dynamic(kernels, "sm_80").verdict, kDynamicUnknown);
  EXPECT_EQ(decide_dynamic({}, "sm_90a").verdict, kDynamicUnknown);
  const DynamicCheck failed = dynamic_unknown("ncu timed out after 120 s");
  EXPECT_EQ(failed.verdict, kDynamicUnknown);
  EXPECT_EQ(failed.reason, "ncu timed out after 120 s");
  EXPECT_TRUE(failed.executed_families.empty());
}

TEST(NcuSource, JsonRoundTrip) {
  for (const std::string name : {"wgmma_live.csv", "wgmma_pred_off.csv", "oob_crash.csv"}) {
    const DynamicCheck check = decide_dynamic(parse_sample(name), "sm_90a");
    const Json json = check.to_json();
    auto back = DynamicCheck::from_json(json);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->to_json(), json) << name;
    EXPECT_EQ(back->verdict, check.verdict);
    EXPECT_EQ(back->executed_families, check.executed_families);
  }
  const Json live = decide_dynamic(parse_sample("wgmma_live.csv"), "sm_90a").to_json();
  EXPECT_EQ(live["verdict"], "dynamic_present");
  EXPECT_EQ(live["families"]["GMMA"]["thread_inst_executed_true"], 128);

  Json bad = live;
  bad["verdict"] = "probably";
  EXPECT_FALSE(DynamicCheck::from_json(bad).ok());
  bad = live;
  bad["families"]["GMMA"].erase("static_lines");
  auto missing = DynamicCheck::from_json(bad);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("static_lines"), std::string::npos);
  EXPECT_FALSE(DynamicCheck::from_json(Json::array()).ok());
}

TEST(NcuSource, ArgvProfilesTheBracketedCallOnly) {
  EXPECT_EQ(ncu_source_argv("/usr/local/cuda/bin/ncu", {"ptxbench-runner", "--self-contained"}),
            (std::vector<std::string>{
                "/usr/local/cuda/bin/ncu", "--clock-control", "none", "--profile-from-start", "off",
                "--page", "source", "--csv", "--print-source", "sass", "--metrics",
                "inst_executed,thread_inst_executed_true", "ptxbench-runner", "--self-contained"}));
}

}  // namespace
}  // namespace ptxb
