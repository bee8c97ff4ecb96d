// The retrieval baseline (adapt/notes_retrieval.h, fix_notes.h): which notes are appended for a
// failing kernel, what text each condition appends, the caps, and the notes file's checks.
#include <gtest/gtest.h>

#include "adapt/notes_retrieval.h"
#include "core/fs.h"
#include "core/strings.h"

namespace ptxb::adapt {
namespace {

FixNote note(const std::string& id, const std::string& task, const std::string& failing,
             const std::string& fixed) {
  return FixNote{id,
                 task,
                 failing,
                 "COMPILE_ERROR: identifier \"" + id + "\" is undefined",
                 "I read the log of " + id + ": the helper does not exist.",
                 "I call the barrier instead, for " + id + ".",
                 fixed};
}

std::vector<FixNote> corpus() {
  return {note("n_tma", "gemm", "void run() { tma_load(smem_a); mbarrier_wait(bar); }",
               "void run() { tma_load(smem_a); fence(); mbarrier_wait(bar); }"),
          note("n_swizzle", "gemm", "void run() { swizzle128(smem_b); ldmatrix(frag); }",
               "void run() { swizzle64(smem_b); ldmatrix(frag); }"),
          note("n_other_task", "attention", "void run() { tma_load(smem_a); mbarrier_wait(bar); }",
               "void run() { other_fix(); }"),
          note("n_unrelated", "gemm", "void run() { wgmma_fence(acc); }",
               "void run() { wgmma_commit(acc); }")};
}

const std::string kQuery = "// my kernel\nvoid run() { tma_load(smem_a); mbarrier_wait(bar); }";

TEST(NotesRetrieval, NotesModeAppendsTheMostSimilarNotesOfTheSameTaskOnly) {
  NotesRetriever retriever(corpus(), RetrievalMode::kNotes, 2);
  EXPECT_EQ(retriever.notes_of("gemm"), 3u);
  Retrieval r = retriever.retrieve("gemm", kQuery);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0].id, "n_tma");  // shares every identifier
  EXPECT_NE(r.notes[1].id, "n_other_task");
  EXPECT_GT(r.notes[0].score, r.notes[1].score);
  EXPECT_FALSE(r.kernel_included);
  EXPECT_TRUE(starts_with(r.text, "## Notes from earlier fixes of this task\n")) << r.text;
  EXPECT_NE(r.text.find("### Note 1: n_tma (score "), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("What failed: COMPILE_ERROR: identifier \"n_tma\" is undefined\n"
                        "Analysis: I read the log of n_tma: the helper does not exist.\n"
                        "Plan: I call the barrier instead, for n_tma.\n"),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.text.find("fence();"), std::string::npos);  // no fixed kernel in this condition
  EXPECT_EQ(r.text.find("n_other_task"), std::string::npos);
  EXPECT_EQ(r.to_json()["bytes"], r.text.size());
}

TEST(NotesRetrieval, NotesPlusKernelAddsTheBestNotesFixedKernelOnly) {
  NotesRetriever retriever(corpus(), RetrievalMode::kNotesAndKernel, 3);
  Retrieval r = retriever.retrieve("gemm", kQuery);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_TRUE(r.kernel_included);
  EXPECT_NE(r.text.find("### Fixed kernel of note 1 (it passed and was verified on fresh "
                        "inputs)\n```cuda\nvoid run() { tma_load(smem_a); fence(); "
                        "mbarrier_wait(bar); }\n```\n"),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.text.find("swizzle64"), std::string::npos);  // only the best note's kernel
}

TEST(NotesRetrieval, NothingInCommonOrAnotherTaskAppendsNothing) {
  NotesRetriever retriever(corpus(), RetrievalMode::kNotesAndKernel, 3);
  // Identifiers only in a comment do not count: the source is comment-stripped.
  Retrieval none = retriever.retrieve("gemm", "/* tma_load smem_a */ int main_x = 1;");
  EXPECT_TRUE(none.notes.empty());
  EXPECT_EQ(none.text, "");
  EXPECT_TRUE(retriever.retrieve("softmax", kQuery).text.empty());
}

TEST(NotesRetrieval, TheSameKernelAlwaysGetsTheSameTextAndTiesGoByFileOrder) {
  std::vector<FixNote> twins = {note("first", "gemm", "void run() { alpha(); }", "a"),
                                note("second", "gemm", "void run() { alpha(); }", "b")};
  NotesRetriever retriever(twins, RetrievalMode::kNotes, 3);
  Retrieval a = retriever.retrieve("gemm", "void run() { alpha(); }");
  ASSERT_EQ(a.notes.size(), 2u);
  EXPECT_EQ(a.notes[0].id, "first");
  EXPECT_EQ(a.notes[0].score, a.notes[1].score);
  EXPECT_EQ(retriever.retrieve("gemm", "void run() { alpha(); }").text, a.text);
}

TEST(NotesRetrieval, FieldsAndTheSectionAreCapped) {
  // Every field far over its cap, with a 3-byte character straddling each cut.
  const std::string euro = "\xE2\x82\xAC";
  std::string huge;
  while (huge.size() < 40000) huge += "ab" + euro;
  std::vector<FixNote> notes;
  for (int i = 0; i < 10; ++i) {
    FixNote n = note(fmt::format("n{}", i), "gemm", "void run() { big_kernel(); }", huge);
    n.feedback = n.analysis = n.plan = huge;
    notes.push_back(n);
  }
  NotesRetriever retriever(notes, RetrievalMode::kNotes, 10);
  Retrieval r = retriever.retrieve("gemm", "void run() { big_kernel(); }");
  EXPECT_LE(r.text.size(), kRetrievalSectionCapBytes);
  // Each block is its three capped fields plus ~170 bytes of labels and cut notes: 5 fit in
  // 24 KiB, the other 5 are left out and counted.
  EXPECT_EQ(r.notes.size(), 5u);
  EXPECT_EQ(r.left_out_for_cap, 5);
  EXPECT_EQ(r.notes.back().id, "n4");
  EXPECT_NE(r.text.find("more bytes not shown]"), std::string::npos);
  // Valid UTF-8 after every cut: the feedback goes into JSON files.
  EXPECT_EQ(to_valid_utf8(r.text), r.text);
  EXPECT_NO_THROW((void)r.to_json().dump());
  // With the kernel the best note and the capped kernel are always there; fewer notes fit.
  NotesRetriever with_kernels(notes, RetrievalMode::kNotesAndKernel, 10);
  Retrieval with_kernel = with_kernels.retrieve("gemm", "void run() { big_kernel(); }");
  EXPECT_TRUE(with_kernel.kernel_included);
  EXPECT_EQ(with_kernel.notes.size(), 2u);
  EXPECT_EQ(with_kernel.left_out_for_cap, 8);
  EXPECT_LE(with_kernel.text.size(), kRetrievalSectionCapBytes);
  EXPECT_EQ(to_valid_utf8(with_kernel.text), with_kernel.text);
}

TEST(NotesRetrieval, ModesParseByName) {
  EXPECT_EQ(parse_retrieval_mode("notes").value(), RetrievalMode::kNotes);
  EXPECT_EQ(parse_retrieval_mode("notes+kernel").value(), RetrievalMode::kNotesAndKernel);
  EXPECT_STREQ(retrieval_mode_name(RetrievalMode::kNotesAndKernel), "notes+kernel");
  auto bad = parse_retrieval_mode("kernel");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("known: notes, notes+kernel"), std::string::npos);
}

TEST(NotesRetrieval, TheNotesFileRoundTripsAndDamageIsNamed) {
  const std::string tmp = make_temp_directory("ptxb-notes").value();
  const std::string path = tmp + "/notes.jsonl";
  ASSERT_TRUE(write_file_atomic(path, notes_jsonl(corpus())).ok());
  auto read = read_notes(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->size(), 4u);
  EXPECT_EQ((*read)[2].task, "attention");
  EXPECT_EQ((*read)[1].fixed_kernel, corpus()[1].fixed_kernel);

  std::vector<FixNote> twice = corpus();
  twice[1].id = "n_tma";
  ASSERT_TRUE(write_file_atomic(path, notes_jsonl(twice)).ok());
  auto duplicate = read_notes(path);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.error().message.find("note 2: id n_tma is used twice"), std::string::npos)
      << duplicate.error().message;

  ASSERT_TRUE(write_file_atomic(path, "{\"id\": \"x\", \"task\": \"gemm\"}\n").ok());
  auto missing = read_notes(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("note 1"), std::string::npos);
  EXPECT_NE(missing.error().message.find("failing_kernel: missing required field"),
            std::string::npos)
      << missing.error().message;
  remove_tree(tmp);
}

}  // namespace
}  // namespace ptxb::adapt
