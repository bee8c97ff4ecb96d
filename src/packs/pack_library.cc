#include "packs/pack_library.h"

#include <algorithm>
#include <cstdlib>

#include "core/fs.h"
#include "core/install_layout.h"
#include "core/strings.h"

namespace ptxb {
namespace {

// A fragment file above this is a mistake (the largest real fragment is tens of kB); the cap
// keeps a stray binary from being pasted into a prompt.
constexpr std::size_t kMaxFragmentBytes = 1u << 20;

Result<std::string> string_field(const Json& object, const std::string& key,
                                 const std::string& path, bool required) {
  if (!object.contains(key)) {
    if (required) return make_error("validation", "{}: missing \"{}\"", path, key);
    return std::string();
  }
  if (!object[key].is_string())
    return make_error("validation", "{}: \"{}\" must be a string", path, key);
  return object[key].get<std::string>();
}

// Names become prompt section ids and CLI arguments: keep them to a plain alphabet.
bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';
  });
}

// Paths in variants.json stay inside the pack folder.
bool safe_relative_path(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  for (const auto& part : split(path, '/'))
    if (part == "..") return false;
  return true;
}

std::string ensure_trailing_newline(std::string text) {
  if (!text.empty() && text.back() != '\n') text.push_back('\n');
  return text;
}

// The quoted includes of a header ("ptxb/hopper/common.cuh"), in order of appearance.
std::vector<std::string> quoted_includes(const std::string& source) {
  std::vector<std::string> includes;
  for (const auto& raw_line : split_lines(source)) {
    const std::string line = trim(raw_line);
    if (!starts_with(line, "#include \"")) continue;
    const auto close = line.find('"', 10);
    if (close != std::string::npos) includes.push_back(line.substr(10, close - 10));
  }
  return includes;
}

}  // namespace

Result<std::string> default_packs_dir() {
  if (const char* env = std::getenv("PTXBENCH_PACKS_DIR"); env && *env) return std::string(env);
  return data_subdir("packs");
}

Result<PackLibrary> PackLibrary::load(const std::string& packs_dir) {
  const std::string path = packs_dir + "/variants.json";
  PTXB_ASSIGN_OR_RETURN(Json document, read_json_file(path));
  return from_json(document, packs_dir, path);
}

Result<PackLibrary> PackLibrary::from_json(const Json& document, const std::string& packs_dir,
                                           const std::string& origin) {
  PackLibrary library;
  library.packs_dir_ = packs_dir;
  if (!document.is_object()) return make_error("validation", "{}: must be a JSON object", origin);
  for (const char* key : {"architectures", "fragments", "tags"})
    if (!document.contains(key) || !document[key].is_object())
      return make_error("validation", "{}: $.{} must be an object", origin, key);

  for (const auto& [arch, entry] : document["architectures"].items()) {
    const std::string path = origin + ": $.architectures." + arch;
    if (!entry.is_object()) return make_error("validation", "{}: must be an object", path);
    ArchitecturePack pack{arch, "", "", ""};
    PTXB_ASSIGN_OR_RETURN(pack.pack, string_field(entry, "pack", path, true));
    PTXB_ASSIGN_OR_RETURN(pack.title, string_field(entry, "title", path, false));
    PTXB_ASSIGN_OR_RETURN(pack.target_note, string_field(entry, "target_note", path, false));
    if (!valid_name(pack.pack))
      return make_error("validation", "{}: pack folder \"{}\" is not a plain name", path,
                        pack.pack);
    library.architectures_.push_back(std::move(pack));
  }

  for (const auto& [name, entry] : document["fragments"].items()) {
    const std::string path = origin + ": $.fragments." + name;
    if (!valid_name(name))
      return make_error("validation", "{}: names use a-z, 0-9, '_', '+', '-'", path);
    if (!entry.is_object()) return make_error("validation", "{}: must be an object", path);
    FragmentSpec fragment{name, "", "", ""};
    PTXB_ASSIGN_OR_RETURN(fragment.title, string_field(entry, "title", path, false));
    PTXB_ASSIGN_OR_RETURN(fragment.file, string_field(entry, "file", path, false));
    PTXB_ASSIGN_OR_RETURN(fragment.headers_dir, string_field(entry, "headers", path, false));
    if (fragment.file.empty() && fragment.headers_dir.empty())
      return make_error("validation", "{}: needs \"file\" or \"headers\"", path);
    for (const auto* rel : {&fragment.file, &fragment.headers_dir})
      if (!rel->empty() && !safe_relative_path(*rel))
        return make_error("validation", "{}: path \"{}\" must stay inside the pack folder", path,
                          *rel);
    library.fragment_index_[name] = library.fragments_.size();
    library.fragments_.push_back(std::move(fragment));
  }

  for (const auto& [name, entry] : document["tags"].items()) {
    const std::string path = origin + ": $.tags." + name;
    if (!valid_name(name))
      return make_error("validation", "{}: names use a-z, 0-9, '_', '+', '-'", path);
    if (library.fragment_index_.count(name))
      return make_error("validation", "{}: \"{}\" is both a fragment and a tag", path, name);
    // A tag is either a plain list of members or {"description": ..., "compose": [...]}.
    const Json* members = &entry;
    TagSpec tag{name, "", {}};
    if (entry.is_object()) {
      PTXB_ASSIGN_OR_RETURN(tag.description, string_field(entry, "description", path, false));
      if (!entry.contains("compose"))
        return make_error("validation", "{}: missing \"compose\"", path);
      members = &entry["compose"];
    }
    if (!members->is_array() || members->empty())
      return make_error("validation", "{}: members must be a non-empty array of names", path);
    for (const auto& member : *members) {
      if (!member.is_string()) return make_error("validation", "{}: members must be strings", path);
      tag.members.push_back(member.get<std::string>());
    }
    library.tag_index_[name] = library.tags_.size();
    library.tags_.push_back(std::move(tag));
  }

  // Resolve every tag once now, so that a cycle or an unknown member is reported at load time
  // for the whole file, not at the first prompt that happens to use the broken tag.
  for (const auto& tag : library.tags_) {
    auto resolved = library.resolve_tag(tag.name);
    if (!resolved.ok()) return resolved.error().with_context(origin);
  }
  return library;
}

const TagSpec* PackLibrary::find_tag(const std::string& name) const {
  auto it = tag_index_.find(name);
  return it == tag_index_.end() ? nullptr : &tags_[it->second];
}

const FragmentSpec* PackLibrary::find_fragment(const std::string& name) const {
  auto it = fragment_index_.find(name);
  return it == fragment_index_.end() ? nullptr : &fragments_[it->second];
}

Result<ArchitecturePack> PackLibrary::pack_for_arch(const std::string& arch) const {
  std::vector<std::string> known;
  for (const auto& pack : architectures_) {
    if (pack.arch == arch) return pack;
    known.push_back(pack.arch);
  }
  return make_error("validation", "no knowledge pack for target architecture \"{}\" (known: {})",
                    arch, join(known, ", "));
}

Status PackLibrary::expand(const std::string& name, std::vector<std::string>& chain,
                           std::vector<std::string>& out) const {
  if (find_fragment(name)) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    return ok_status();
  }
  const TagSpec* tag = find_tag(name);
  if (!tag) {
    if (chain.empty()) return make_error("validation", "unknown variant tag \"{}\"", name);
    return make_error("validation",
                      "tag \"{}\" lists \"{}\", which is neither a fragment nor a tag",
                      chain.back(), name);
  }
  if (std::find(chain.begin(), chain.end(), name) != chain.end()) {
    chain.push_back(name);
    return make_error("validation", "tag composition has a cycle: {}", join(chain, " -> "));
  }
  chain.push_back(name);
  for (const auto& member : tag->members) PTXB_RETURN_IF_ERROR(expand(member, chain, out));
  chain.pop_back();
  return ok_status();
}

Result<std::vector<std::string>> PackLibrary::resolve_tag(const std::string& tag) const {
  if (!find_tag(tag)) {
    std::vector<std::string> names;
    for (const auto& known : tags_) names.push_back(known.name);
    return make_error("validation", "unknown variant tag \"{}\" (known: {})", tag,
                      join(names, ", "));
  }
  std::vector<std::string> chain;
  std::vector<std::string> fragments;
  PTXB_RETURN_IF_ERROR(expand(tag, chain, fragments));
  return fragments;
}

Result<ComposedFragment> PackLibrary::render_fragment(const FragmentSpec& fragment,
                                                      const ArchitecturePack& pack,
                                                      std::string& text,
                                                      std::vector<std::string>& warnings) const {
  ComposedFragment composed{fragment.name, {}, 0};
  const std::size_t start = text.size();
  const std::string pack_dir = packs_dir_ + "/" + pack.pack;
  if (!fragment.file.empty()) {
    const std::string path = pack_dir + "/" + fragment.file;
    auto body = read_file(path, kMaxFragmentBytes);
    if (!body.ok())
      return make_error("io", "fragment \"{}\" of pack {}: {}", fragment.name, pack.pack,
                        body.error().message);
    text += ensure_trailing_newline(std::move(body).value());
    composed.sources.push_back(pack.pack + "/" + fragment.file);
  }
  if (!fragment.headers_dir.empty()) {
    PTXB_RETURN_IF_ERROR(render_headers(fragment, pack, text, composed, warnings));
  }
  composed.bytes = text.size() - start;
  return composed;
}

Status PackLibrary::render_headers(const FragmentSpec& fragment, const ArchitecturePack& pack,
                                   std::string& text, ComposedFragment& composed,
                                   std::vector<std::string>& warnings) const {
  // The wrapper headers go in verbatim: the model sees exactly the code it may #include. First
  // every *.cuh of this pack (sorted by path), then the headers of other packs that they include
  // (a Blackwell header may build on the architecture-neutral Hopper ones), so that every
  // `#include "ptxb/..."` the model reads resolves to text it was shown.
  struct Header {
    std::string pack;      // pack folder it comes from
    std::string relative;  // include path, e.g. ptxb/hopper/common.cuh
  };
  auto include_root = [&](const std::string& pack_name) {
    return packs_dir_ + "/" + pack_name + "/" + fragment.headers_dir;
  };
  std::vector<Header> headers;
  const std::string own_root = include_root(pack.pack);
  if (is_directory(own_root)) {
    PTXB_ASSIGN_OR_RETURN(auto files, list_files_recursive(own_root));
    for (const auto& file : files)
      if (ends_with(file, ".cuh")) headers.push_back({pack.pack, file.substr(own_root.size() + 1)});
  }
  if (headers.empty()) {
    warnings.push_back(
        fmt::format("fragment \"{}\": no *.cuh wrapper headers under {}", fragment.name, own_root));
    return ok_status();
  }
  auto known = [&](const std::string& relative) {
    return std::any_of(headers.begin(), headers.end(),
                       [&](const Header& h) { return h.relative == relative; });
  };
  std::vector<std::string> bodies;
  for (std::size_t i = 0; i < headers.size(); ++i) {  // grows while cross-pack includes are found
    const std::string path = include_root(headers[i].pack) + "/" + headers[i].relative;
    PTXB_ASSIGN_OR_RETURN(std::string body, read_file(path, kMaxFragmentBytes));
    for (const auto& include : quoted_includes(body)) {
      if (known(include)) continue;
      bool found = false;
      for (const auto& other : architectures_) {
        if (path_exists(include_root(other.pack) + "/" + include)) {
          headers.push_back({other.pack, include});
          found = true;
          break;
        }
      }
      if (!found)
        warnings.push_back(fmt::format("{}: #include \"{}\" is in no pack's {} folder",
                                       headers[i].relative, include, fragment.headers_dir));
    }
    bodies.push_back(std::move(body));
  }
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const Header& header = headers[i];
    const std::string origin =
        header.pack == pack.pack ? "" : fmt::format(" (shared with the {} pack)", header.pack);
    text += fmt::format("\n### `{}`{}\n\n```cuda\n{}```\n", header.relative, origin,
                        ensure_trailing_newline(std::move(bodies[i])));
    composed.sources.push_back(header.pack + "/" + fragment.headers_dir + "/" + header.relative);
  }
  return ok_status();
}

Result<ComposedPack> PackLibrary::compose(const std::string& arch, const std::string& tag) const {
  PTXB_ASSIGN_OR_RETURN(ArchitecturePack pack, pack_for_arch(arch));
  PTXB_ASSIGN_OR_RETURN(std::vector<std::string> names, resolve_tag(tag));
  ComposedPack composed;
  composed.arch = pack.arch;
  composed.pack = pack.pack;
  composed.tag = tag;
  for (const auto& name : names) {
    if (!composed.text.empty()) composed.text += "\n";
    PTXB_ASSIGN_OR_RETURN(
        ComposedFragment fragment,
        render_fragment(*find_fragment(name), pack, composed.text, composed.warnings));
    composed.fragments.push_back(std::move(fragment));
  }
  return composed;
}

}  // namespace ptxb
