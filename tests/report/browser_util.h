// Headless Chromium for the HTML report test: renders a file once, returning the DOM after
// parsing (what the browser built, not what we wrote) and a screenshot; plus a small reader of
// that serialized DOM, enough to find elements by tag and attribute and to read their text.
#pragma once

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/process.h"
#include "core/result.h"
#include "core/strings.h"

namespace ptxb::testing {

// The Debian package `chromium` (scripts/setup.sh installs it).
inline std::optional<std::string> find_chromium() {
  return find_executable("chromium");
}

struct BrowserRender {
  std::string dom;             // --dump-dom: the document serialized after loading
  std::string screenshot_png;  // --screenshot at the given window size
};

// One Chromium run does both (--dump-dom and --screenshot together), which halves the test's
// time: most of a headless run is browser start-up.
inline Result<BrowserRender> render_in_chromium(const std::string& chromium,
                                                const std::string& html_path,
                                                const std::string& work_dir, int width,
                                                int height) {
  std::string screenshot = work_dir + "/screenshot.png";
  ProcessSpec spec;
  spec.argv = {chromium, "--headless",
               // Root (CI, containers) cannot use Chromium's sandbox; the page is our own file.
               "--no-sandbox", "--disable-gpu",
               // A fresh profile per run: parallel test runs must not hand the page to each
               // other's browser process through a shared profile lock.
               "--user-data-dir=" + work_dir + "/profile", "--no-first-run", "--disable-extensions",
               "--disable-background-networking",
               // Anything the page tried to fetch fails at once instead of waiting on a network
               // that CI may not have; the test checks separately that nothing is referenced.
               "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars",
               fmt::format("--window-size={},{}", width, height), "--screenshot=" + screenshot,
               "--dump-dom", "file://" + html_path};
  // HOME too: Chromium writes caches and an NSS database under it.
  std::vector<std::string> env;
  for (const std::string& entry : current_environment())
    if (!starts_with(entry, "HOME=")) env.push_back(entry);
  env.push_back("HOME=" + work_dir);
  spec.env = env;
  // A cold start on a loaded 2-core CI machine takes several seconds; a hang must not stall CI.
  spec.timeout = std::chrono::seconds(90);
  spec.output_cap_bytes = 16u << 20;
  SystemProcessRunner runner;
  PTXB_ASSIGN_OR_RETURN(ProcessResult result, runner.run(spec));
  if (!result.succeeded())
    return make_error("chromium", "{} {}: {}", chromium, result.describe(),
                      cap_text(result.stderr_text, 4000));
  BrowserRender render;
  render.dom = std::move(result.stdout_text);
  PTXB_ASSIGN_OR_RETURN(render.screenshot_png, read_file(screenshot, 64u << 20));
  return render;
}

// An element of the serialized DOM: its tag, attributes and the byte range of its content.
struct DomElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::size_t begin = 0;          // the '<' of the start tag
  std::size_t content_begin = 0;  // after the start tag
  std::size_t content_end = 0;    // the '<' of the end tag (== content_begin if none)

  std::string attribute(const std::string& key) const {
    auto it = attributes.find(key);
    return it == attributes.end() ? "" : it->second;
  }
};

inline std::string decode_entities(std::string text) {
  text = replace_all(text, "&lt;", "<");
  text = replace_all(text, "&gt;", ">");
  text = replace_all(text, "&quot;", "\"");
  text = replace_all(text, "&nbsp;", "\xc2\xa0");
  return replace_all(text, "&amp;", "&");
}

// Chromium's serialization is regular (quoted attributes, every non-void element closed), so a
// tag scanner with a stack recovers the tree without a full HTML5 parser.
class Dom {
 public:
  explicit Dom(std::string html) : html_(std::move(html)) { scan(); }

  // Elements named `name` (and with attribute key = value, when key is given), in document
  // order, optionally only those inside `within`.
  std::vector<const DomElement*> find(const std::string& name, const std::string& key = "",
                                      const std::string& value = "",
                                      const DomElement* within = nullptr) const {
    std::vector<const DomElement*> found;
    for (const DomElement& element : elements_) {
      if (element.name != name) continue;
      if (!key.empty() && element.attribute(key) != value) continue;
      if (within &&
          (element.begin < within->content_begin || element.content_end > within->content_end))
        continue;
      found.push_back(&element);
    }
    return found;
  }

  // The element's text with tags removed and entities decoded.
  std::string text(const DomElement& element) const {
    std::string out;
    bool in_tag = false;
    for (std::size_t i = element.content_begin; i < element.content_end; ++i) {
      char c = html_[i];
      if (c == '<') in_tag = true;
      if (!in_tag) out += c;
      if (c == '>') in_tag = false;
    }
    return decode_entities(out);
  }

  const std::string& html() const { return html_; }
  std::size_t size() const { return elements_.size(); }
  const std::vector<DomElement>& elements() const { return elements_; }

 private:
  static bool is_void(const std::string& name) {
    static const std::vector<std::string> kVoid = {"area",   "base",  "br",    "col",  "embed",
                                                   "hr",     "img",   "input", "link", "meta",
                                                   "source", "track", "wbr"};
    return std::find(kVoid.begin(), kVoid.end(), name) != kVoid.end();
  }

  void scan() {
    std::vector<std::size_t> open;  // indices into elements_
    std::size_t at = 0;
    while ((at = html_.find('<', at)) != std::string::npos) {
      if (html_.compare(at, 4, "<!--") == 0) {
        at = html_.find("-->", at);
        if (at == std::string::npos) return;
        continue;
      }
      std::size_t end = html_.find('>', at);
      if (end == std::string::npos) return;
      if (html_[at + 1] == '!' || html_[at + 1] == '?') {
        at = end + 1;
        continue;
      }
      if (html_[at + 1] == '/') {
        std::string name = to_lower(trim(html_.substr(at + 2, end - at - 2)));
        // Close the innermost open element of that name (and anything left open inside it).
        for (std::size_t i = open.size(); i-- > 0;) {
          if (elements_[open[i]].name != name) continue;
          elements_[open[i]].content_end = at;
          open.resize(i);
          break;
        }
        at = end + 1;
        continue;
      }
      DomElement element;
      element.begin = at;
      std::size_t cursor = at + 1;
      while (cursor < end && !std::isspace(static_cast<unsigned char>(html_[cursor])) &&
             html_[cursor] != '/')
        ++cursor;
      element.name = to_lower(html_.substr(at + 1, cursor - at - 1));
      end = parse_attributes(cursor, element.attributes);
      bool self_closing = html_[end - 1] == '/';
      element.content_begin = element.content_end = end + 1;
      at = end + 1;
      if (element.name == "style" || element.name == "script") {
        // Raw text: its content may hold '<' and '>' that are not tags.
        std::size_t close = html_.find("</" + element.name, at);
        element.content_end = close == std::string::npos ? html_.size() : close;
        at = element.content_end;
        elements_.push_back(std::move(element));
        continue;
      }
      elements_.push_back(std::move(element));
      if (!self_closing && !is_void(elements_.back().name)) open.push_back(elements_.size() - 1);
    }
  }

  // Reads name="value" pairs from `cursor`; returns the position of the tag's closing '>'
  // (a '>' inside a quoted value does not end the tag).
  std::size_t parse_attributes(std::size_t cursor, std::map<std::string, std::string>& out) {
    while (cursor < html_.size() && html_[cursor] != '>') {
      if (std::isspace(static_cast<unsigned char>(html_[cursor])) || html_[cursor] == '/') {
        ++cursor;
        continue;
      }
      std::size_t name_end = html_.find_first_of("= \t\n/>", cursor);
      std::string key = to_lower(html_.substr(cursor, name_end - cursor));
      cursor = name_end;
      std::string value;
      if (html_[cursor] == '=') {
        char quote = html_[cursor + 1];
        if (quote == '"' || quote == '\'') {
          std::size_t close = html_.find(quote, cursor + 2);
          value = html_.substr(cursor + 2, close - cursor - 2);
          cursor = close + 1;
        } else {
          std::size_t close = html_.find_first_of(" \t\n>", cursor + 1);
          value = html_.substr(cursor + 1, close - cursor - 1);
          cursor = close;
        }
      }
      out[key] = decode_entities(value);
    }
    return cursor;
  }

  std::string html_;
  std::vector<DomElement> elements_;
};

}  // namespace ptxb::testing
