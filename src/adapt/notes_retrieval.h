// The retrieval baseline (docs/adaptation.md "Prompt-time baselines"): on a failing turn, the
// notes of historical fixes (fix_notes.h) of the same task whose failing kernels look most like
// the kernel the model just wrote, appended to the feedback it reads.
//
// Ranking: BM25 (bm25.h) over identifier tokens of the comment-stripped source
// (source_tokens.h): the query is the failing kernel, the documents the notes' failing kernels;
// only notes of the same task; the best `top_k` with a positive score, ties by file order. The
// same kernel and notes file always give the same text.
//
// Two conditions: kNotes appends each note's failure, analysis and plan; kNotesAndKernel adds
// the best note's fixed kernel. The section is capped: each field to its own cap below, and the
// whole section to kRetrievalSectionCapBytes: the best note (and its kernel) always fit, lower
// ranked notes that would pass the cap are left out and counted, so a long note never crowds
// the turn's own feedback out of the context window.
#pragma once

#include <string>
#include <vector>

#include "adapt/bm25.h"
#include "adapt/fix_notes.h"

namespace ptxb::adapt {

enum class RetrievalMode { kNotes, kNotesAndKernel };

// "notes" / "notes+kernel", as the CLI and the experiment file spell them.
const char* retrieval_mode_name(RetrievalMode mode);
Result<RetrievalMode> parse_retrieval_mode(const std::string& name);

// Caps, in bytes (cut on a UTF-8 boundary with a note of what was cut). The feedback excerpt is
// only a reminder of what failed (the model has its own feedback above it); the plan and
// analysis are the substance. 24 KiB for the whole section is about 7,000 tokens
// (packs/token_estimate.h), under a tenth of a 128k context for up to 8 turns.
inline constexpr std::size_t kNoteFeedbackCapBytes = 800;
inline constexpr std::size_t kNoteAnalysisCapBytes = 2000;
inline constexpr std::size_t kNotePlanCapBytes = 1500;
inline constexpr std::size_t kNoteKernelCapBytes = 12000;
inline constexpr std::size_t kRetrievalSectionCapBytes = 24576;

struct RetrievedNote {
  std::string id;
  double score = 0;
};

struct Retrieval {
  std::vector<RetrievedNote> notes;  // best first, as appended
  bool kernel_included = false;      // the best note's fixed kernel (kNotesAndKernel)
  int left_out_for_cap = 0;          // hits not appended: the section cap
  std::string text;                  // "" when nothing was retrieved

  Json to_json() const;  // {"notes": [{"id", "score"}], "kernel_included", "left_out_for_cap",
                         //  "bytes"}
};

class NotesRetriever {
 public:
  NotesRetriever(std::vector<FixNote> notes, RetrievalMode mode, std::size_t top_k);

  Retrieval retrieve(const std::string& task, const std::string& failing_source) const;
  std::size_t notes_of(const std::string& task) const;

 private:
  std::vector<FixNote> notes_;
  RetrievalMode mode_;
  std::size_t top_k_;
  Bm25Index index_;
};

}  // namespace ptxb::adapt
