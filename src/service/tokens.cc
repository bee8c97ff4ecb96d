#include "service/tokens.h"

#include <set>

#include "core/fs.h"
#include "core/strings.h"

namespace ptxb::service {
namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

// Constant time in the contents for strings of equal length; the length itself is not secret.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

Result<TokenTable> TokenTable::parse(const std::string& text, const std::string& origin,
                                     const ClientLimits& defaults) {
  TokenTable table;
  std::set<std::string> names, tokens;
  int line_number = 0;
  for (const std::string& raw : split_lines(text)) {
    ++line_number;
    std::string line = raw.substr(0, raw.find('#'));
    std::vector<std::string> words;
    for (const auto& w : split(trim(line), ' '))
      if (!trim(w).empty()) words.push_back(trim(w));
    if (words.empty()) continue;
    const std::string where = origin + ":" + std::to_string(line_number);
    if (words.size() < 2)
      return make_error("parse", "{}: expected NAME TOKEN [key=value...]", where);
    Entry entry{{words[0], defaults}, words[1]};
    if (!valid_name(entry.client.name))
      return make_error("parse", "{}: client name must be 1-64 of [A-Za-z0-9._-]", where);
    // The token is not echoed in any message.
    if (entry.token.size() < 16)
      return make_error("parse", "{}: the token of {} is shorter than 16 characters", where,
                        entry.client.name);
    if (!names.insert(entry.client.name).second)
      return make_error("parse", "{}: client {} is listed twice", where, entry.client.name);
    if (!tokens.insert(entry.token).second)
      return make_error("parse", "{}: the token of {} is already another client's", where,
                        entry.client.name);
    for (std::size_t i = 2; i < words.size(); ++i) {
      const auto eq = words[i].find('=');
      const std::string key = words[i].substr(0, eq);
      double value = 0;
      try {
        if (eq == std::string::npos) throw std::invalid_argument("no value");
        std::size_t used = 0;
        value = std::stod(words[i].substr(eq + 1), &used);
        if (used != words[i].size() - eq - 1) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        return make_error("parse", "{}: expected key=number, got \"{}\"", where, words[i]);
      }
      if (value <= 0) return make_error("parse", "{}: {} must be positive", where, key);
      if (key == "rate")
        entry.client.limits.rate_per_second = value;
      else if (key == "burst")
        entry.client.limits.burst = value;
      else if (key == "quota")
        entry.client.limits.queue_quota = static_cast<int>(value);
      else
        return make_error("parse", "{}: unknown setting \"{}\" (rate, burst, quota)", where, key);
    }
    table.entries_.push_back(std::move(entry));
  }
  if (table.entries_.empty()) return make_error("parse", "{}: no client listed", origin);
  return table;
}

Result<TokenTable> TokenTable::load(const std::string& path, const ClientLimits& defaults) {
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, 1u << 20));
  return parse(text, path, defaults);
}

std::optional<Client> TokenTable::find(const std::string& token) const {
  std::optional<Client> found;
  // Every entry is compared (no early exit), so the time does not tell which entry matched.
  for (const auto& entry : entries_)
    if (same_secret(entry.token, token) && !found) found = entry.client;
  return found;
}

std::string bearer_token(const std::string& authorization_header) {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization_header.size() <= kScheme.size()) return "";
  if (to_lower(authorization_header.substr(0, kScheme.size())) != "bearer ") return "";
  return trim(authorization_header.substr(kScheme.size()));
}

}  // namespace ptxb::service
