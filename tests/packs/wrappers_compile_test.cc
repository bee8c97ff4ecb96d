// Compiles the knowledge-pack coverage translation units (testdata/packs/*_all.cu) with nvcc
// and checks the SASS: every wrapper must lower to the instruction family the PTX ISA promises
// (wgmma -> HGMMA for every N, cp.async.bulk.tensor -> UTMALDG/UTMASTG/UTMAREDG per rank,
// mbarrier -> SYNCS.*, setmaxnreg -> USETMAXREG with the requested counts and no C7508 warning;
// tcgen05 -> UTC*, LDTM, STTM on sm_100a). Two nvcc runs in total to keep CI time modest.
// Skipped (visibly) when the CUDA toolkit or cuobjdump is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/fs.h"
#include "core/process.h"

namespace ptxb {
namespace {

std::string nvcc_path() {
  const std::string bundled = std::string(PTXB_CUDA_ROOT) + "/bin/nvcc";
  if (std::filesystem::exists(bundled)) return bundled;
  return find_executable("nvcc").value_or("");
}

std::string cuobjdump_path() {
  const std::string bundled = std::string(PTXB_PYDEPS_DIR) + "/nvidia/cu13/bin/cuobjdump";
  if (std::filesystem::exists(bundled)) return bundled;
  return find_executable("cuobjdump").value_or("");
}

struct CompiledUnit {
  std::string ptxas_log;  // nvcc stderr with -Xptxas -v
  std::string sass;       // cuobjdump -sass of the object
};

// Compiles `source` (relative to testdata/packs) for `gencode` and disassembles it.
void compile_and_disassemble(const std::string& source, const std::string& gencode,
                             const std::vector<std::string>& include_dirs, CompiledUnit* out) {
  const std::string nvcc = nvcc_path(), cuobjdump = cuobjdump_path();
  // scripts/setup.sh installs both; a missing tool must fail, not silently skip, the check that
  // every wrapper compiles in CI.
  ASSERT_FALSE(nvcc.empty()) << "nvcc not found (PTXB_CUDA_ROOT or PATH)";
  ASSERT_FALSE(cuobjdump.empty()) << "cuobjdump not found (run scripts/setup.sh)";
  auto dir = make_temp_directory("ptxb-packs-");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  const std::string object = *dir + "/unit.o";
  std::vector<std::string> argv = {nvcc, "-std=c++17", "-gencode", gencode, "-Xptxas", "-v"};
  for (const auto& include : include_dirs)
    argv.push_back("-I" + std::string(PTXB_SOURCE_DIR) + "/" + include);
  argv.insert(argv.end(),
              {"-c", std::string(PTXB_TESTDATA_DIR) + "/packs/" + source, "-o", object});
  ProcessSpec compile{argv};
  compile.timeout = std::chrono::minutes(10);
  auto compiled = SystemProcessRunner().run(compile);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message;
  ASSERT_TRUE(compiled->succeeded()) << source << ": nvcc " << compiled->describe() << "\n"
                                     << compiled->stderr_text;
  out->ptxas_log = compiled->stderr_text;
  ProcessSpec dump{{cuobjdump, "-sass", object}};
  dump.timeout = std::chrono::minutes(2);
  dump.output_cap_bytes = 64u << 20;
  auto dumped = SystemProcessRunner().run(dump);
  ASSERT_TRUE(dumped.ok()) << dumped.error().message;
  ASSERT_TRUE(dumped->succeeded()) << "cuobjdump " << dumped->describe() << "\n"
                                   << dumped->stderr_text;
  out->sass = dumped->stdout_text;
  remove_tree(*dir);
}

void expect_opcodes(const std::string& sass, const std::vector<std::string>& opcodes) {
  for (const auto& opcode : opcodes) {
    EXPECT_NE(sass.find(opcode), std::string::npos) << "SASS lacks " << opcode;
  }
}

TEST(PackWrappersCompile, HopperEveryWrapperLowersToItsSassFamily) {
  CompiledUnit unit;
  compile_and_disassemble("hopper_all.cu", "arch=compute_90a,code=sm_90a", {"packs/hopper/include"},
                          &unit);
  if (HasFatalFailure() || IsSkipped()) return;
  // setmaxnreg must be honoured: ptxas warns C7508 when it ignores it.
  EXPECT_EQ(unit.ptxas_log.find("C7508"), std::string::npos) << unit.ptxas_log;
  EXPECT_EQ(unit.ptxas_log.find("warning"), std::string::npos) << unit.ptxas_log;
  std::vector<std::string> opcodes;
  for (int n = 8; n <= 256; n += 8) {
    opcodes.push_back("HGMMA.64x" + std::to_string(n) + "x16.F32.BF16 ");
  }
  for (int d = 1; d <= 5; ++d) {
    const std::string rank = std::to_string(d) + "D";
    opcodes.push_back("UTMALDG." + rank + " ");
    opcodes.push_back("UTMALDG." + rank + ".MULTICAST");
    opcodes.push_back("UTMASTG." + rank + " ");
    opcodes.push_back("UTMAREDG." + rank + ".ADD");
    opcodes.push_back("UTMAPF.L2." + rank);
  }
  opcodes.insert(opcodes.end(), {"UBLKCP.S.G",
                                 "UTMACCTL.PF",  // bulk copy, prefetch.tensormap
                                 "SYNCS.EXCH.64",
                                 "SYNCS.ARRIVE.TRANS64",             // mbarrier init, arrive(+tx)
                                 "SYNCS.PHASECHK.TRANS64.TRYWAIT",   // try_wait.parity
                                 "USETMAXREG.DEALLOC.CTAPOOL 0x28",  // setmaxnreg.dec 40
                                 "USETMAXREG.TRY_ALLOC.CTAPOOL",     // setmaxnreg.inc ...
                                 ", 0xe8",                           // ... 232
                                 "UCGABAR_ARV",
                                 "UCGABAR_WAIT",  // barrier.cluster
                                 "BAR.ARV",
                                 "BAR.SYNC",
                                 "ELECT",  // named barriers, elect.sync
                                 "LDSM.16.M88 ",
                                 "LDSM.16.M88.2",
                                 "LDSM.16.M88.4",
                                 "LDSM.16.MT88 ",
                                 "LDSM.16.MT88.2",
                                 "LDSM.16.MT88.4",
                                 "STSM.16.M88 ",
                                 "STSM.16.M88.2",
                                 "STSM.16.M88.4",
                                 "STSM.16.MT88 ",
                                 "STSM.16.MT88.2",
                                 "STSM.16.MT88.4",
                                 "MUFU.EX2",
                                 "F2FP.BF16.F32.PACK_AB"});
  expect_opcodes(unit.sass, opcodes);
}

TEST(PackWrappersCompile, BlackwellEveryWrapperLowersToUtcLdtmSttm) {
  CompiledUnit unit;
  compile_and_disassemble("blackwell_all.cu", "arch=compute_100a,code=sm_100a",
                          {"packs/hopper/include", "packs/blackwell/include"}, &unit);
  if (HasFatalFailure() || IsSkipped()) return;
  EXPECT_EQ(unit.ptxas_log.find("warning"), std::string::npos) << unit.ptxas_log;
  std::vector<std::string> opcodes = {"UTCHMMA ",      // tcgen05.mma.cta_group::1.kind::f16
                                      "UTCHMMA.2CTA",  // tcgen05.mma.cta_group::2.kind::f16
                                      "UTCBAR ",
                                      "UTCBAR.MULTICAST",
                                      "UTCBAR.2CTA ",
                                      "UTCBAR.2CTA.MULTICAST",  // tcgen05.commit
                                      "UTCCP.T.S ",
                                      "UTCCP.T.S.2CTA",  // tcgen05.cp
                                      "UTCATOMSWS.FIND_AND_SET.ALIGN",
                                      "UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN",  // tcgen05.alloc
                                      "USETMAXREG.DEALLOC.CTAPOOL",
                                      "USETMAXREG.TRY_ALLOC.CTAPOOL"};
  for (const char* num : {"", ".x2", ".x4", ".x8", ".x16", ".x32", ".x64", ".x128"}) {
    opcodes.push_back(std::string("LDTM") + num + " ");
    opcodes.push_back(std::string("STTM") + num + " ");
  }
  for (int d = 1; d <= 5; ++d) opcodes.push_back("UTMALDG." + std::to_string(d) + "D.2CTA");
  expect_opcodes(unit.sass, opcodes);
}

}  // namespace
}  // namespace ptxb

namespace ptxb {
namespace {

// nvcc's stderr for testdata/packs/asm_scope.cu built with -DPTXB_ASM_SCOPE=variant, and
// whether it succeeded.
std::pair<bool, std::string> compile_asm_scope(int variant) {
  auto dir = make_temp_directory("ptxb-asm-scope-");
  if (!dir.ok()) return {false, dir.error().message};
  ProcessSpec compile{{nvcc_path(), "-gencode", "arch=compute_90a,code=sm_90a",
                       "-DPTXB_ASM_SCOPE=" + std::to_string(variant), "-c",
                       std::string(PTXB_TESTDATA_DIR) + "/packs/asm_scope.cu", "-o",
                       *dir + "/asm_scope.o"}};
  compile.timeout = std::chrono::minutes(5);
  auto compiled = SystemProcessRunner().run(compile);
  remove_tree(*dir);
  if (!compiled.ok()) return {false, compiled.error().message};
  return {compiled->succeeded(), compiled->stderr_text};
}

// The debugging hints (packs/*/debugging.md §4.5) quote ptxas's own messages and give two fixes;
// this keeps both true for the toolchain the harness compiles with.
TEST(PackDebuggingHints, AsmLabelsAndRegsInlinedTwiceNeedPerInstanceNamesOrBraces) {
  ASSERT_FALSE(nvcc_path().empty()) << "nvcc not found (PTXB_CUDA_ROOT or PATH)";
  auto [unscoped_ok, unscoped_log] = compile_asm_scope(0);
  EXPECT_FALSE(unscoped_ok);
  EXPECT_NE(unscoped_log.find("Duplicate definition of label 'WAIT'"), std::string::npos)
      << unscoped_log;
  EXPECT_NE(unscoped_log.find("Duplicate definition of variable 'done'"), std::string::npos)
      << unscoped_log;
  auto [unique_ok, unique_log] = compile_asm_scope(1);
  EXPECT_TRUE(unique_ok) << "%= names: " << unique_log;
  auto [braced_ok, braced_log] = compile_asm_scope(2);
  EXPECT_TRUE(braced_ok) << "braced body: " << braced_log;
  auto [split_ok, split_log] = compile_asm_scope(3);
  EXPECT_FALSE(split_ok);
  EXPECT_NE(split_log.find("Unknown symbol 'done'"), std::string::npos) << split_log;

  for (const char* pack : {"hopper", "blackwell"}) {
    auto hints =
        read_file(std::string(PTXB_SOURCE_DIR) + "/packs/" + pack + "/debugging.md", 1 << 20);
    ASSERT_TRUE(hints.ok()) << hints.error().message;
    for (const char* quoted : {"Duplicate definition of label", "Unknown symbol",
                               "%=", "\"memory\"", "bits 16–29", "bits 32–45", "parity 1"})
      EXPECT_NE(hints->find(quoted), std::string::npos) << pack << ": " << quoted;
  }
}

}  // namespace
}  // namespace ptxb
