// The service's half of the compile split (compile/compiler.h analyse_prebuilt) with the real
// toolchain (no GPU needed): a kernel.so built elsewhere is re-checked and re-analysed from its
// bytes, and nothing the client claimed survives that.
#include <gtest/gtest.h>

#include "compile/compiler.h"
#include "core/fs.h"

// A named namespace: the tests are unity-built, and other files have file-local helpers of the
// same names.
namespace ptxb::prebuilt_test {

// `void run(float* out, cudaStream_t stream)`.
RunSignature out_signature() {
  RunSignature s;
  s.parameters = {{AbiParameter::Kind::kOutput, "float*", "out", "out", false},
                  {AbiParameter::Kind::kStream, "cudaStream_t", "stream", "", false}};
  return s;
}

constexpr const char* kHonest =
    "#include <cuda_runtime.h>\n"
    "__global__ void fill(float* out) { out[threadIdx.x] = 2.0f * threadIdx.x; }\n"
    "void run(float* out, cudaStream_t stream) { fill<<<1, 32, 0, stream>>>(out); }\n";
// A library call a client could build with its own checks off (test-only switch) and upload.
constexpr const char* kCublas =
    "#include <cuda_runtime.h>\n"
    "extern \"C\" int cublasGemmEx(void* handle, int transa);\n"
    "__global__ void fill(float* out) { out[threadIdx.x] = 1.0f; }\n"
    "void run(float* out, cudaStream_t stream) { fill<<<1, 32, 0, stream>>>(out); "
    "cublasGemmEx(nullptr, 0); }\n";

class Prebuilt : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static SystemProcessRunner runner;
    auto found = Toolchain::discover(runner);
    if (found.ok()) toolchain_ = new Toolchain(std::move(found).value());
  }
  void SetUp() override {
    ASSERT_NE(toolchain_, nullptr) << "toolchain not found; run bash scripts/setup.sh";
    cache_ = *make_temp_directory("ptxb-prebuilt-test");
  }
  void TearDown() override { remove_tree(cache_); }

  CompileRequest request(const std::string& source, bool enforce = true) {
    CompileRequest r;
    r.source = source;
    r.signature = out_signature();
    r.options = CompileOptions::defaults();
    r.options.include_dirs.clear();
    r.options.cache_dir = cache_;
    r.options.enforce_forbidden = enforce;
    return r;
  }
  // What a client uploads after its own compile.
  PrebuiltBinary binary_of(const CompileResult& compiled) {
    PrebuiltBinary b;
    const CompileArtifact& a = compiled.artifact;
    b.shared_object = *read_file(a.path_of(a.shared_object), 64 << 20);
    b.ptx = *read_file(a.path_of(a.ptx_file), 64 << 20);
    b.nvcc_version = a.toolchain.nvcc.version;
    return b;
  }

  static Toolchain* toolchain_;
  std::string cache_;
};
Toolchain* Prebuilt::toolchain_ = nullptr;

TEST_F(Prebuilt, AnalysisOfTheUploadedBinaryMatchesTheCompile) {
  auto compiled = compile_solution(request(kHonest), *toolchain_);
  ASSERT_TRUE(compiled.ok() && compiled->ok()) << compiled->log;
  // The service's side, in a cache of its own: nothing of the client's analysis is there.
  const std::string client_cache = cache_;
  cache_ = *make_temp_directory("ptxb-prebuilt-service");
  auto analysed = analyse_prebuilt(request(kHonest), binary_of(*compiled), *toolchain_);
  ASSERT_TRUE(analysed.ok()) << analysed.error().message;
  EXPECT_TRUE(analysed->ok()) << analysed->message << "\n" << analysed->log;
  EXPECT_EQ(analysed->sass.family_totals, compiled->sass.family_totals);
  EXPECT_EQ(analysed->sass.target_present, compiled->sass.target_present);
  EXPECT_EQ(analysed->artifact.cubin_files.size(), compiled->artifact.cubin_files.size());
  EXPECT_EQ(analysed->artifact.sha256.at("kernel.so"), compiled->artifact.sha256.at("kernel.so"));
  ASSERT_FALSE(analysed->stage_ms.empty());
  EXPECT_EQ(analysed->stage_ms.front().first, "cache_lookup");     // no nvcc stage: not compiled
  EXPECT_EQ(analysed->log.find(client_cache), std::string::npos);  // no host paths
  // A second upload of the same bytes is the cached analysis.
  auto again = analyse_prebuilt(request(kHonest), binary_of(*compiled), *toolchain_);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->from_cache);
  remove_tree(client_cache);
}

TEST_F(Prebuilt, LibraryCallsAreForbiddenWhateverTheClientChecked) {
  // Built with the static checks off (what a dishonest client does), then uploaded.
  auto compiled = compile_solution(request(kCublas, /*enforce=*/false), *toolchain_);
  ASSERT_TRUE(compiled.ok() && compiled->ok()) << compiled->log;
  auto analysed = analyse_prebuilt(request(kCublas), binary_of(*compiled), *toolchain_);
  ASSERT_TRUE(analysed.ok()) << analysed.error().message;
  EXPECT_EQ(analysed->status, CompileStatus::kForbidden);
  EXPECT_EQ(analysed->reason, "forbidden_symbol");
  EXPECT_NE(analysed->message.find("cublasGemmEx"), std::string::npos) << analysed->message;
}

TEST_F(Prebuilt, ForeignToolchainAndGarbageAreRefusedAsResults) {
  auto compiled = compile_solution(request(kHonest), *toolchain_);
  ASSERT_TRUE(compiled.ok() && compiled->ok());
  PrebuiltBinary foreign = binary_of(*compiled);
  foreign.nvcc_version = "12.4.131";
  auto refused = analyse_prebuilt(request(kHonest), foreign, *toolchain_);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, CompileStatus::kCompileError);
  EXPECT_EQ(refused->reason, "toolchain_mismatch");

  PrebuiltBinary garbage = binary_of(*compiled);
  garbage.shared_object = std::string(4096, '\x7f') + "not an ELF file";
  auto rejected = analyse_prebuilt(request(kHonest), garbage, *toolchain_);
  ASSERT_TRUE(rejected.ok()) << rejected.error().message;
  EXPECT_EQ(rejected->status, CompileStatus::kCompileError);
  EXPECT_EQ(rejected->reason, "prebuilt_invalid");
}

}  // namespace ptxb::prebuilt_test
