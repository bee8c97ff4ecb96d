#include "adapt/notes_retrieval.h"

#include <algorithm>

#include "adapt/source_tokens.h"

namespace ptxb::adapt {
namespace {

// The first `max_bytes` bytes, cut back to a UTF-8 character boundary (the text goes into JSON,
// which must stay valid UTF-8), with a note of the cut.
std::string cap_utf8(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}\n[... {} more bytes not shown]", text.substr(0, cut), text.size() - cut);
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::string note_block(std::size_t rank, const FixNote& note, double score) {
  return fmt::format("### Note {}: {} (score {:.2f})\nWhat failed: {}\nAnalysis: {}\nPlan: {}\n",
                     rank, note.id, score, cap_utf8(trimmed(note.feedback), kNoteFeedbackCapBytes),
                     cap_utf8(trimmed(note.analysis), kNoteAnalysisCapBytes),
                     cap_utf8(trimmed(note.plan), kNotePlanCapBytes));
}

// The fixed lines of a note block and of the section, with room for the note's id.
constexpr std::size_t kBlockSlackBytes = 1024;
static_assert(kNoteFeedbackCapBytes + kNoteAnalysisCapBytes + kNotePlanCapBytes +
                      kNoteKernelCapBytes + 2 * kBlockSlackBytes <=
                  kRetrievalSectionCapBytes,
              "the best note and its fixed kernel must always fit in the section");

constexpr const char* kHeader =
    "## Notes from earlier fixes of this task\n"
    "Repairs of other failing kernels of this task, chosen because their identifiers look like "
    "yours (BM25). They may not apply: check each against your own feedback above.\n";

}  // namespace

const char* retrieval_mode_name(RetrievalMode mode) {
  return mode == RetrievalMode::kNotes ? "notes" : "notes+kernel";
}

Result<RetrievalMode> parse_retrieval_mode(const std::string& name) {
  if (name == "notes") return RetrievalMode::kNotes;
  if (name == "notes+kernel") return RetrievalMode::kNotesAndKernel;
  return make_error("usage", "unknown retrieval mode '{}' (known: notes, notes+kernel)", name);
}

Json Retrieval::to_json() const {
  Json list = Json::array();
  for (const auto& n : notes) list.push_back(Json{{"id", n.id}, {"score", n.score}});
  return Json{{"notes", list},
              {"kernel_included", kernel_included},
              {"left_out_for_cap", left_out_for_cap},
              {"bytes", text.size()}};
}

NotesRetriever::NotesRetriever(std::vector<FixNote> notes, RetrievalMode mode, std::size_t top_k)
    : notes_(std::move(notes)), mode_(mode), top_k_(top_k) {
  for (const FixNote& note : notes_) index_.add(identifier_tokens(note.failing_kernel));
}

std::size_t NotesRetriever::notes_of(const std::string& task) const {
  return static_cast<std::size_t>(std::count_if(notes_.begin(), notes_.end(),
                                                [&](const FixNote& n) { return n.task == task; }));
}

Retrieval NotesRetriever::retrieve(const std::string& task,
                                   const std::string& failing_source) const {
  Retrieval out;
  const auto hits = index_.top_k(identifier_tokens(failing_source), top_k_,
                                 [&](std::size_t i) { return notes_[i].task == task; });
  if (hits.empty()) return out;
  // The best note's kernel is reserved first: in the notes+kernel condition it is the point.
  std::string kernel_block;
  if (mode_ == RetrievalMode::kNotesAndKernel)
    kernel_block = fmt::format(
        "### Fixed kernel of note 1 (it passed and was verified on fresh inputs)\n"
        "```cuda\n{}\n```\n",
        cap_utf8(trimmed(notes_[hits.front().document].fixed_kernel), kNoteKernelCapBytes));
  std::string text = kHeader;
  for (const Bm25Hit& hit : hits) {
    std::string block = note_block(out.notes.size() + 1, notes_[hit.document], hit.score);
    if (text.size() + block.size() + kernel_block.size() > kRetrievalSectionCapBytes) {
      ++out.left_out_for_cap;
      continue;
    }
    text += block;
    out.notes.push_back({notes_[hit.document].id, hit.score});
  }
  // Only a note id longer than the slack below could keep the best note out.
  if (out.notes.empty()) return out;
  if (!kernel_block.empty() && out.notes.front().id == notes_[hits.front().document].id) {
    text += kernel_block;
    out.kernel_included = true;
  }
  out.text = std::move(text);
  return out;
}

}  // namespace ptxb::adapt
