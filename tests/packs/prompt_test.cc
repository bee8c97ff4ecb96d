// Knowledge-pack composition and prompt assembly (src/packs). The fixture packs in
// testdata/packs_fixture keep these tests independent of the real packs' wording; the last group
// measures the real packs under packs/ against the 15k–35k token budget of design.md §5.
#include <gtest/gtest.h>

#include <string>

#include "abi/signature.h"
#include "core/strings.h"
#include "packs/pack_library.h"
#include "packs/prompt_builder.h"
#include "packs/token_estimate.h"

namespace ptxb {
namespace {

const std::string kFixtureDir = std::string(PTXB_TESTDATA_DIR) + "/packs_fixture";
const std::string kRealPacksDir = std::string(PTXB_SOURCE_DIR) + "/packs";

// The GEMM task of design.md §4, built by hand so that these tests do not depend on the
// definition parser.
Definition gemm_definition() {
  Definition def;
  def.name = "gemm_n7168_k5120";
  def.op_type = "gemm";
  def.tags = {"status:verified", "ptxbench:gemm"};
  def.axes = {{"M", true, std::nullopt}, {"N", false, 7168}, {"K", false, 5120}};
  def.inputs = {{"A", std::vector<std::string>{"M", "K"}, DType::kBFloat16},
                {"B", std::vector<std::string>{"N", "K"}, DType::kBFloat16}};
  def.outputs = {{"C", std::vector<std::string>{"M", "N"}, DType::kBFloat16}};
  def.raw = Json::parse(R"({
    "name": "gemm_n7168_k5120", "op_type": "gemm", "description": "C = A @ B.T",
    "tags": ["status:verified", "ptxbench:gemm"],
    "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 7168},
             "K": {"type": "const", "value": 5120}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "bfloat16"},
               "B": {"shape": ["N", "K"], "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "bfloat16"}},
    "reference": "def run(A, B):\n    return A @ B.T"})");
  return def;
}

PromptTask gemm_task(const std::string& arch) {
  PromptTask task;
  task.definition = gemm_definition();
  task.arch = arch;
  task.axis_values = {{"M", 8192}, {"N", 7168}, {"K", 5120}};
  task.reference = "cuBLASLt";
  return task;
}

PackLibrary load_fixture() {
  auto library = PackLibrary::load(kFixtureDir);
  EXPECT_TRUE(library.ok()) << (library.ok() ? "" : library.error().message);
  return std::move(library).value();
}

Result<PackLibrary> library_from(const char* text) {
  return PackLibrary::from_json(Json::parse(text), kFixtureDir, "inline.json");
}

TEST(PackComposition, TagsExpandDepthFirstWithoutDuplicates) {
  PackLibrary library = load_fixture();
  auto fragments = library.resolve_tag("base+pattern");
  ASSERT_TRUE(fragments.ok()) << fragments.error().message;
  // "parameters" appears twice in the expansion; it keeps its first position.
  EXPECT_EQ(fragments.value(),
            (std::vector<std::string>{"parameters", "wrappers", "contracts", "pattern"}));
}

TEST(PackComposition, HeadersAreIncludedVerbatimAndSorted) {
  PackLibrary library = load_fixture();
  auto pack = library.compose("sm_90a", "base");
  ASSERT_TRUE(pack.ok()) << pack.error().message;
  const std::string& text = pack->text;
  EXPECT_TRUE(pack->warnings.empty());
  const auto params = text.find("ALPHA-PARAMS");
  const auto header_a = text.find("ALPHA-HEADER-A");
  const auto header_b = text.find("ALPHA-HEADER-B");
  const auto contracts = text.find("ALPHA-CONTRACTS");
  ASSERT_NE(header_a, std::string::npos);
  ASSERT_NE(header_b, std::string::npos);
  EXPECT_LT(params, header_a);
  EXPECT_LT(header_a, header_b);
  EXPECT_LT(header_b, contracts);
  EXPECT_TRUE(contains(text, "### `ptxb/alpha/a_first.cuh`\n\n```cuda\n// ALPHA-HEADER-A\n"));
  EXPECT_FALSE(contains(text, "not a header"));  // only *.cuh files
  ASSERT_EQ(pack->fragments.size(), 3u);
  EXPECT_EQ(pack->fragments[1].sources,
            (std::vector<std::string>{"alpha/wrappers.md", "alpha/include/ptxb/alpha/a_first.cuh",
                                      "alpha/include/ptxb/alpha/b_second.cuh"}));
}

TEST(PackComposition, CyclesAreRejectedAtLoadWithTheChain) {
  auto library = library_from(R"({
    "architectures": {"sm_90a": {"pack": "alpha"}},
    "fragments": {"parameters": {"file": "parameters.md"}},
    "tags": {"a": ["parameters", "b"], "b": ["c"], "c": ["a"]}})");
  ASSERT_FALSE(library.ok());
  EXPECT_TRUE(contains(library.error().message, "cycle")) << library.error().message;
  EXPECT_TRUE(contains(library.error().message, "a -> b -> c -> a")) << library.error().message;
}

TEST(PackComposition, SelfReferenceIsACycle) {
  auto library = library_from(R"({"architectures": {}, "fragments": {},
    "tags": {"loop": ["loop"]}})");
  ASSERT_FALSE(library.ok());
  EXPECT_TRUE(contains(library.error().message, "loop -> loop")) << library.error().message;
}

TEST(PackComposition, UnknownMemberIsRejectedAtLoad) {
  auto library = library_from(R"({"architectures": {},
    "fragments": {"parameters": {"file": "parameters.md"}},
    "tags": {"base": ["parameters", "contrcts"]}})");
  ASSERT_FALSE(library.ok());
  EXPECT_TRUE(contains(library.error().message, "\"contrcts\"")) << library.error().message;
  EXPECT_TRUE(contains(library.error().message, "neither a fragment nor a tag"));
}

TEST(PackComposition, UnknownTagListsTheKnownOnes) {
  PackLibrary library = load_fixture();
  auto pack = library.compose("sm_90a", "base+nonsense");
  ASSERT_FALSE(pack.ok());
  EXPECT_TRUE(contains(pack.error().message, "unknown variant tag \"base+nonsense\""));
  EXPECT_TRUE(contains(pack.error().message, "base+pattern"));
}

TEST(PackComposition, UnknownArchitectureIsAnError) {
  PackLibrary library = load_fixture();
  auto pack = library.compose("sm_80", "base");
  ASSERT_FALSE(pack.ok());
  EXPECT_TRUE(contains(pack.error().message, "sm_80"));
}

TEST(PackComposition, MissingFragmentFileNamesThePath) {
  PackLibrary library = load_fixture();
  auto pack = library.compose("sm_100a", "base");  // beta has no contracts.md
  ASSERT_FALSE(pack.ok());
  EXPECT_TRUE(contains(pack.error().message, "beta/contracts.md")) << pack.error().message;
  EXPECT_TRUE(contains(pack.error().message, "\"contracts\""));
}

TEST(PackComposition, EmptyHeaderFolderIsAWarning) {
  PackLibrary library = load_fixture();
  auto pack = library.compose("sm_100a", "params_only");
  ASSERT_TRUE(pack.ok());
  EXPECT_TRUE(pack->warnings.empty());
  auto library_json = library_from(R"({
    "architectures": {"sm_100a": {"pack": "beta"}},
    "fragments": {"wrappers": {"file": "wrappers.md", "headers": "include"}},
    "tags": {"w": ["wrappers"]}})");
  ASSERT_TRUE(library_json.ok());
  auto wrappers = library_json->compose("sm_100a", "w");
  ASSERT_TRUE(wrappers.ok()) << wrappers.error().message;
  ASSERT_EQ(wrappers->warnings.size(), 1u);
  EXPECT_TRUE(contains(wrappers->warnings[0], "no *.cuh wrapper headers"));
}

TEST(PackComposition, HeadersIncludedFromAnotherPackFollowTheirIncluder) {
  auto library = library_from(R"({
    "architectures": {"sm_90a": {"pack": "alpha"}, "sm_101a": {"pack": "gamma"}},
    "fragments": {"wrappers": {"file": "wrappers.md", "headers": "include"}},
    "tags": {"w": ["wrappers"]}})");
  ASSERT_TRUE(library.ok()) << library.error().message;
  auto pack = library->compose("sm_101a", "w");
  ASSERT_TRUE(pack.ok()) << pack.error().message;
  const std::string& text = pack->text;
  EXPECT_LT(text.find("GAMMA-HEADER"), text.find("ALPHA-HEADER-A"));
  EXPECT_TRUE(contains(text, "### `ptxb/alpha/a_first.cuh` (shared with the alpha pack)"));
  EXPECT_FALSE(contains(text, "ALPHA-HEADER-B"));  // not included by gamma: not shown
  ASSERT_EQ(pack->warnings.size(), 1u);
  EXPECT_TRUE(contains(pack->warnings[0], "ptxb/gamma/missing.cuh")) << pack->warnings[0];
  EXPECT_EQ(pack->fragments[0].sources,
            (std::vector<std::string>{"gamma/wrappers.md", "gamma/include/ptxb/gamma/g.cuh",
                                      "alpha/include/ptxb/alpha/a_first.cuh"}));
}

TEST(PackComposition, PathsMayNotLeaveThePack) {
  auto library = library_from(R"({"architectures": {},
    "fragments": {"evil": {"file": "../../etc/passwd"}}, "tags": {}})");
  ASSERT_FALSE(library.ok());
  EXPECT_TRUE(contains(library.error().message, "inside the pack folder"));
}

TEST(TokenEstimate, IsBytesOverThreePointFiveRoundedUp) {
  EXPECT_EQ(approx_tokens(""), 0u);
  EXPECT_EQ(approx_tokens("abc"), 1u);
  EXPECT_EQ(approx_tokens("abcdefg"), 2u);   // 7 bytes = exactly 2 tokens
  EXPECT_EQ(approx_tokens("abcdefgh"), 3u);  // rounds up
  EXPECT_EQ(approx_tokens_for_bytes(77000), 22000u);
}

TEST(PromptBuilder, SystemPromptHasPackAbiAndExactSignature) {
  PackLibrary library = load_fixture();
  auto prompt = build_prompt(library, gemm_task("sm_90a"), "base+pattern");
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  const std::string signature =
      "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, "
      "int64_t N, int64_t K, cudaStream_t stream)";
  EXPECT_EQ(make_run_signature(gemm_definition()).declaration(), signature);
  EXPECT_TRUE(contains(prompt->system, "```cuda\n" + signature + ";\n```"));
  EXPECT_TRUE(contains(prompt->first_user, signature + ";"));
  EXPECT_TRUE(contains(prompt->system, "ALPHA-PATTERN"));
  EXPECT_TRUE(contains(prompt->system, "Fixture target note."));
  EXPECT_TRUE(contains(prompt->system, "256-byte aligned"));
  EXPECT_TRUE(contains(prompt->system, "exactly ONE fenced code block"));
  EXPECT_TRUE(contains(prompt->system, "extern \"C\""));
  // The pack sits between the response format and the ABI rules.
  EXPECT_LT(prompt->system.find("Response format"), prompt->system.find("ALPHA-PARAMS"));
  EXPECT_LT(prompt->system.find("ALPHA-PATTERN"), prompt->system.find("# Solution ABI"));
  EXPECT_EQ(prompt->fragments.size(), 4u);
  EXPECT_EQ(prompt->system_size.bytes, prompt->system.size());
  EXPECT_EQ(prompt->system_size.approx_tokens, approx_tokens(prompt->system));
}

TEST(PromptBuilder, FirstUserMessageIsTheDefinitionWithoutTags) {
  PackLibrary library = load_fixture();
  auto prompt = build_prompt(library, gemm_task("sm_90a"), "base");
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  Json expected = gemm_definition().raw;
  expected.erase("tags");
  EXPECT_TRUE(contains(prompt->first_user, "```json\n" + dump_pretty(expected) + "```"));
  EXPECT_FALSE(contains(prompt->first_user, "status:verified"));
  EXPECT_FALSE(contains(prompt->first_user, "\"tags\""));
  // Key order of the definition is the calling convention: it must survive.
  EXPECT_LT(prompt->first_user.find("\"A\""), prompt->first_user.find("\"B\""));
  EXPECT_TRUE(contains(prompt->first_user, "M = 8192 (var), N = 7168 (const), K = 5120 (const)"));
  EXPECT_TRUE(contains(prompt->first_user, "input A [M=8192, K=5120]"));
  EXPECT_TRUE(contains(prompt->first_user, "atol = 0.01, rtol = 0.01"));
  EXPECT_TRUE(contains(prompt->first_user, "at least 1.2× faster than cuBLASLt"));
}

TEST(PromptBuilder, JsonFormCarriesSizesAndText) {
  PackLibrary library = load_fixture();
  auto prompt = build_prompt(library, gemm_task("sm_90a"), "params_only");
  ASSERT_TRUE(prompt.ok());
  Json json = prompt_to_json(*prompt);
  EXPECT_EQ(json["variant"], "params_only");
  EXPECT_EQ(json["sizes"]["system"]["bytes"], prompt->system.size());
  EXPECT_EQ(json["system"], prompt->system);
  EXPECT_EQ(json["fragments"][0]["name"], "parameters");
}

// ---- the real packs ----

struct DefaultVariant {
  const char* family;
  const char* tag;
};
constexpr DefaultVariant kDefaultVariants[] = {
    {"gemm", "base"},
    {"gemm", "base+cluster_multicast"},
    {"gemm", "base+warp_specialization"},
    {"attention_fwd", "base+fa3_fwd"},
    {"attention_fwd", "base+fa3_fwd_overlap"},
    {"attention_bwd", "base+two_kernel_bwd"},
    {"attention_bwd", "base+two_kernel_bwd_fwd_context"},
};

TEST(RealPacks, LoadAndEveryTagComposesForBothArchitectures) {
  auto library = PackLibrary::load(kRealPacksDir);
  ASSERT_TRUE(library.ok()) << library.error().message;
  for (const auto& arch : library->architectures())
    for (const auto& tag : library->tags()) {
      auto pack = library->compose(arch.arch, tag.name);
      EXPECT_TRUE(pack.ok()) << arch.arch << " " << tag.name << ": "
                             << (pack.ok() ? "" : pack.error().message);
    }
}

// design.md §5: each default variant is 15k–35k tokens. Fails loudly, never skips, when the wrapper
// headers (packs/<arch>/include/**/*.cuh) are absent: a pack without them is not the product.
TEST(RealPacks, DefaultVariantsAreWithinTheTokenBudget) {
  auto library = PackLibrary::load(kRealPacksDir);
  ASSERT_TRUE(library.ok()) << library.error().message;
  for (const auto& arch : library->architectures()) {
    for (const auto& variant : kDefaultVariants) {
      auto prompt = build_prompt(*library, gemm_task(arch.arch), variant.tag);
      ASSERT_TRUE(prompt.ok()) << prompt.error().message;
      EXPECT_TRUE(prompt->warnings.empty())
          << arch.arch << " " << variant.tag << ": " << join(prompt->warnings, "; ")
          << " (wrapper headers missing: merge the wrapper-header branch)";
      const std::size_t tokens = prompt->system_size.approx_tokens;
      EXPECT_GE(tokens, 15000u) << arch.arch << " " << variant.tag;
      EXPECT_LE(tokens, 35000u) << arch.arch << " " << variant.tag;
    }
  }
}

}  // namespace
}  // namespace ptxb
