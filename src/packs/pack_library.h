// Knowledge packs: the controlled architecture knowledge every model gets (design.md §1, §5).
//
// `packs/variants.json` names the fragments (one markdown file each, or a folder of wrapper
// headers) and the tags (prompt variants). A tag is composed of fragments and of other tags, so
// the ablation ladder ("params_only" → "+wrappers" → "+contracts" → "+one pattern") and the
// default variants ("base", "base+fa3_fwd", ...) share one definition of each piece. Fragment
// paths are relative to an architecture's pack folder (`packs/hopper/`, `packs/blackwell/`), so
// the same tag resolves to the Hopper or the Blackwell text depending on the task's target.
//
// Composition is deterministic: members expand depth-first in the order written, and a fragment
// reached twice keeps its first position. Cycles, unknown names and missing files are errors
// that name the tag chain or the path.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct FragmentSpec {
  std::string name;
  std::string title;        // human label for listings
  std::string file;         // markdown file relative to the pack folder ("" if none)
  std::string headers_dir;  // folder of *.cuh wrapper headers relative to the pack ("" if none)
};

struct TagSpec {
  std::string name;
  std::string description;
  std::vector<std::string> members;  // fragment or tag names, in order
};

struct ArchitecturePack {
  std::string arch;   // "sm_90a"
  std::string pack;   // folder under packs/: "hopper"
  std::string title;  // "NVIDIA Hopper (H100 SXM, H200 SXM)"
  // Sentence for the system prompt: compile target and the instruction families that count.
  std::string target_note;
};

// One piece of a composed pack, as it appears in the prompt.
struct ComposedFragment {
  std::string name;
  std::vector<std::string> sources;  // files read, relative to packs/ ("hopper/contracts.md")
  std::size_t bytes = 0;
};

// The knowledge-pack text of one variant for one architecture.
struct ComposedPack {
  std::string arch;
  std::string pack;
  std::string tag;
  std::vector<ComposedFragment> fragments;
  std::string text;
  // Non-fatal problems the caller must surface (e.g. a wrapper-header folder with no headers).
  std::vector<std::string> warnings;
};

class PackLibrary {
 public:
  // Reads `<packs_dir>/variants.json` and validates it (names, cycles); fragment files are read
  // lazily by compose(), so a library loads even while a pack is being written.
  static Result<PackLibrary> load(const std::string& packs_dir);
  // Same from an already-parsed document; `origin` names it in errors.
  static Result<PackLibrary> from_json(const Json& document, const std::string& packs_dir,
                                       const std::string& origin);

  const std::string& packs_dir() const { return packs_dir_; }
  const std::vector<ArchitecturePack>& architectures() const { return architectures_; }
  const std::vector<TagSpec>& tags() const { return tags_; }
  const std::vector<FragmentSpec>& fragments() const { return fragments_; }
  const TagSpec* find_tag(const std::string& name) const;
  const FragmentSpec* find_fragment(const std::string& name) const;

  // The pack of a target architecture ("sm_90a" → hopper); error for an unknown target.
  Result<ArchitecturePack> pack_for_arch(const std::string& arch) const;

  // The fragment names a tag expands to, in prompt order, without duplicates.
  Result<std::vector<std::string>> resolve_tag(const std::string& tag) const;

  // Reads and concatenates the fragments of `tag` from the pack of `arch`.
  Result<ComposedPack> compose(const std::string& arch, const std::string& tag) const;

 private:
  Status expand(const std::string& name, std::vector<std::string>& chain,
                std::vector<std::string>& out) const;
  Result<ComposedFragment> render_fragment(const FragmentSpec& fragment,
                                           const ArchitecturePack& pack, std::string& text,
                                           std::vector<std::string>& warnings) const;
  Status render_headers(const FragmentSpec& fragment, const ArchitecturePack& pack,
                        std::string& text, ComposedFragment& composed,
                        std::vector<std::string>& warnings) const;

  std::string packs_dir_;
  std::vector<ArchitecturePack> architectures_;
  std::vector<FragmentSpec> fragments_;
  std::vector<TagSpec> tags_;
  std::map<std::string, std::size_t> fragment_index_;
  std::map<std::string, std::size_t> tag_index_;
};

// $PTXBENCH_PACKS_DIR if set, else the data folder's packs/ (core/install_layout.h).
Result<std::string> default_packs_dir();

}  // namespace ptxb
