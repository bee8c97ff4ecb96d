// Small string helpers shared by parsers and renderers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptxb {

std::vector<std::string> split(std::string_view text, char separator);
std::vector<std::string> split_lines(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::string trim(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);
bool contains(std::string_view text, std::string_view needle);
std::string replace_all(std::string text, std::string_view from, std::string_view to);
std::string to_lower(std::string_view text);

// "1 turn", "2 turns", "1 trajectory", "3 trajectories": `count` and the noun in the right
// number (English: -y after a consonant becomes -ies, else -s).
std::string count_noun(long long count, std::string_view singular);

// "SIGSEGV" for 11, "signal 99" for unknown numbers.
std::string signal_name(int signal_number);

// A run of decimal digits (as a tool's output matched by a regex) as a number, saturated at
// `max_value` instead of throwing: an absurd count in a malformed report must not end the parse.
// A leading '-' is honoured; anything else that is not a digit makes the value 0.
long long digits_saturating(std::string_view digits, long long max_value);

// Keeps the first `max_bytes` bytes of `text` and appends a note with the dropped size.
std::string cap_text(std::string_view text, std::size_t max_bytes);

}  // namespace ptxb
