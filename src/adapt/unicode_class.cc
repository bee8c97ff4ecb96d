#include "adapt/unicode_class.h"

#include <algorithm>
#include <iterator>

namespace ptxb::adapt {
namespace {

struct ClassRange {
  char32_t first, last;
  CharClass kind = CharClass::kOther;
};

constexpr CharClass kLetter = CharClass::kLetter;
constexpr CharClass kNumber = CharClass::kNumber;

// The blocks kRanges is exact in (unicode_class.h); check_unicode_classes.py reads this list.
constexpr ClassRange kCoveredBlocks[] = {
    {0x0000, 0x06FF}, {0x0900, 0x097F}, {0x0E00, 0x0E7F},   {0x10A0, 0x11FF},   {0x1D00, 0x2BFF},
    {0x2C60, 0x2C7F}, {0x3000, 0x9FFF}, {0xA720, 0xA7FF},   {0xAB30, 0xAB6F},   {0xAC00, 0xD7AF},
    {0xF900, 0xFB4F}, {0xFF00, 0xFFEF}, {0x1D400, 0x1D7FF}, {0x20000, 0x3134F},
};

// \p{L} and \p{N} in the covered blocks, sorted: made by
// `check_unicode_classes.py --emit` from Unicode 14.0 (Python 3.11's unicodedata).
constexpr ClassRange kRanges[] = {
    {0x0030, 0x0039, kNumber},   {0x0041, 0x005A, kLetter},   {0x0061, 0x007A, kLetter},
    {0x00AA, 0x00AA, kLetter},   {0x00B2, 0x00B3, kNumber},   {0x00B5, 0x00B5, kLetter},
    {0x00B9, 0x00B9, kNumber},   {0x00BA, 0x00BA, kLetter},   {0x00BC, 0x00BE, kNumber},
    {0x00C0, 0x00D6, kLetter},   {0x00D8, 0x00F6, kLetter},   {0x00F8, 0x02C1, kLetter},
    {0x02C6, 0x02D1, kLetter},   {0x02E0, 0x02E4, kLetter},   {0x02EC, 0x02EC, kLetter},
    {0x02EE, 0x02EE, kLetter},   {0x0370, 0x0374, kLetter},   {0x0376, 0x0377, kLetter},
    {0x037A, 0x037D, kLetter},   {0x037F, 0x037F, kLetter},   {0x0386, 0x0386, kLetter},
    {0x0388, 0x038A, kLetter},   {0x038C, 0x038C, kLetter},   {0x038E, 0x03A1, kLetter},
    {0x03A3, 0x03F5, kLetter},   {0x03F7, 0x0481, kLetter},   {0x048A, 0x052F, kLetter},
    {0x0531, 0x0556, kLetter},   {0x0559, 0x0559, kLetter},   {0x0560, 0x0588, kLetter},
    {0x05D0, 0x05EA, kLetter},   {0x05EF, 0x05F2, kLetter},   {0x0620, 0x064A, kLetter},
    {0x0660, 0x0669, kNumber},   {0x066E, 0x066F, kLetter},   {0x0671, 0x06D3, kLetter},
    {0x06D5, 0x06D5, kLetter},   {0x06E5, 0x06E6, kLetter},   {0x06EE, 0x06EF, kLetter},
    {0x06F0, 0x06F9, kNumber},   {0x06FA, 0x06FC, kLetter},   {0x06FF, 0x06FF, kLetter},
    {0x0904, 0x0939, kLetter},   {0x093D, 0x093D, kLetter},   {0x0950, 0x0950, kLetter},
    {0x0958, 0x0961, kLetter},   {0x0966, 0x096F, kNumber},   {0x0971, 0x097F, kLetter},
    {0x0E01, 0x0E30, kLetter},   {0x0E32, 0x0E33, kLetter},   {0x0E40, 0x0E46, kLetter},
    {0x0E50, 0x0E59, kNumber},   {0x10A0, 0x10C5, kLetter},   {0x10C7, 0x10C7, kLetter},
    {0x10CD, 0x10CD, kLetter},   {0x10D0, 0x10FA, kLetter},   {0x10FC, 0x11FF, kLetter},
    {0x1D00, 0x1DBF, kLetter},   {0x1E00, 0x1F15, kLetter},   {0x1F18, 0x1F1D, kLetter},
    {0x1F20, 0x1F45, kLetter},   {0x1F48, 0x1F4D, kLetter},   {0x1F50, 0x1F57, kLetter},
    {0x1F59, 0x1F59, kLetter},   {0x1F5B, 0x1F5B, kLetter},   {0x1F5D, 0x1F5D, kLetter},
    {0x1F5F, 0x1F7D, kLetter},   {0x1F80, 0x1FB4, kLetter},   {0x1FB6, 0x1FBC, kLetter},
    {0x1FBE, 0x1FBE, kLetter},   {0x1FC2, 0x1FC4, kLetter},   {0x1FC6, 0x1FCC, kLetter},
    {0x1FD0, 0x1FD3, kLetter},   {0x1FD6, 0x1FDB, kLetter},   {0x1FE0, 0x1FEC, kLetter},
    {0x1FF2, 0x1FF4, kLetter},   {0x1FF6, 0x1FFC, kLetter},   {0x2070, 0x2070, kNumber},
    {0x2071, 0x2071, kLetter},   {0x2074, 0x2079, kNumber},   {0x207F, 0x207F, kLetter},
    {0x2080, 0x2089, kNumber},   {0x2090, 0x209C, kLetter},   {0x2102, 0x2102, kLetter},
    {0x2107, 0x2107, kLetter},   {0x210A, 0x2113, kLetter},   {0x2115, 0x2115, kLetter},
    {0x2119, 0x211D, kLetter},   {0x2124, 0x2124, kLetter},   {0x2126, 0x2126, kLetter},
    {0x2128, 0x2128, kLetter},   {0x212A, 0x212D, kLetter},   {0x212F, 0x2139, kLetter},
    {0x213C, 0x213F, kLetter},   {0x2145, 0x2149, kLetter},   {0x214E, 0x214E, kLetter},
    {0x2150, 0x2182, kNumber},   {0x2183, 0x2184, kLetter},   {0x2185, 0x2189, kNumber},
    {0x2460, 0x249B, kNumber},   {0x24EA, 0x24FF, kNumber},   {0x2776, 0x2793, kNumber},
    {0x2C60, 0x2C7F, kLetter},   {0x3005, 0x3006, kLetter},   {0x3007, 0x3007, kNumber},
    {0x3021, 0x3029, kNumber},   {0x3031, 0x3035, kLetter},   {0x3038, 0x303A, kNumber},
    {0x303B, 0x303C, kLetter},   {0x3041, 0x3096, kLetter},   {0x309D, 0x309F, kLetter},
    {0x30A1, 0x30FA, kLetter},   {0x30FC, 0x30FF, kLetter},   {0x3105, 0x312F, kLetter},
    {0x3131, 0x318E, kLetter},   {0x3192, 0x3195, kNumber},   {0x31A0, 0x31BF, kLetter},
    {0x31F0, 0x31FF, kLetter},   {0x3220, 0x3229, kNumber},   {0x3248, 0x324F, kNumber},
    {0x3251, 0x325F, kNumber},   {0x3280, 0x3289, kNumber},   {0x32B1, 0x32BF, kNumber},
    {0x3400, 0x4DBF, kLetter},   {0x4E00, 0x9FFF, kLetter},   {0xA722, 0xA788, kLetter},
    {0xA78B, 0xA7CA, kLetter},   {0xA7D0, 0xA7D1, kLetter},   {0xA7D3, 0xA7D3, kLetter},
    {0xA7D5, 0xA7D9, kLetter},   {0xA7F2, 0xA7FF, kLetter},   {0xAB30, 0xAB5A, kLetter},
    {0xAB5C, 0xAB69, kLetter},   {0xAC00, 0xD7A3, kLetter},   {0xF900, 0xFA6D, kLetter},
    {0xFA70, 0xFAD9, kLetter},   {0xFB00, 0xFB06, kLetter},   {0xFB13, 0xFB17, kLetter},
    {0xFB1D, 0xFB1D, kLetter},   {0xFB1F, 0xFB28, kLetter},   {0xFB2A, 0xFB36, kLetter},
    {0xFB38, 0xFB3C, kLetter},   {0xFB3E, 0xFB3E, kLetter},   {0xFB40, 0xFB41, kLetter},
    {0xFB43, 0xFB44, kLetter},   {0xFB46, 0xFB4F, kLetter},   {0xFF10, 0xFF19, kNumber},
    {0xFF21, 0xFF3A, kLetter},   {0xFF41, 0xFF5A, kLetter},   {0xFF66, 0xFFBE, kLetter},
    {0xFFC2, 0xFFC7, kLetter},   {0xFFCA, 0xFFCF, kLetter},   {0xFFD2, 0xFFD7, kLetter},
    {0xFFDA, 0xFFDC, kLetter},   {0x1D400, 0x1D454, kLetter}, {0x1D456, 0x1D49C, kLetter},
    {0x1D49E, 0x1D49F, kLetter}, {0x1D4A2, 0x1D4A2, kLetter}, {0x1D4A5, 0x1D4A6, kLetter},
    {0x1D4A9, 0x1D4AC, kLetter}, {0x1D4AE, 0x1D4B9, kLetter}, {0x1D4BB, 0x1D4BB, kLetter},
    {0x1D4BD, 0x1D4C3, kLetter}, {0x1D4C5, 0x1D505, kLetter}, {0x1D507, 0x1D50A, kLetter},
    {0x1D50D, 0x1D514, kLetter}, {0x1D516, 0x1D51C, kLetter}, {0x1D51E, 0x1D539, kLetter},
    {0x1D53B, 0x1D53E, kLetter}, {0x1D540, 0x1D544, kLetter}, {0x1D546, 0x1D546, kLetter},
    {0x1D54A, 0x1D550, kLetter}, {0x1D552, 0x1D6A5, kLetter}, {0x1D6A8, 0x1D6C0, kLetter},
    {0x1D6C2, 0x1D6DA, kLetter}, {0x1D6DC, 0x1D6FA, kLetter}, {0x1D6FC, 0x1D714, kLetter},
    {0x1D716, 0x1D734, kLetter}, {0x1D736, 0x1D74E, kLetter}, {0x1D750, 0x1D76E, kLetter},
    {0x1D770, 0x1D788, kLetter}, {0x1D78A, 0x1D7A8, kLetter}, {0x1D7AA, 0x1D7C2, kLetter},
    {0x1D7C4, 0x1D7CB, kLetter}, {0x1D7CE, 0x1D7FF, kNumber}, {0x20000, 0x2A6DF, kLetter},
    {0x2A700, 0x2B738, kLetter}, {0x2B740, 0x2B81D, kLetter}, {0x2B820, 0x2CEA1, kLetter},
    {0x2CEB0, 0x2EBE0, kLetter}, {0x2F800, 0x2FA1D, kLetter}, {0x30000, 0x3134A, kLetter},
};

// Sorted, disjoint and inside the covered blocks: the binary search and the header's claim rely
// on it.
constexpr bool ranges_are_well_formed() {
  for (std::size_t i = 0; i < std::size(kRanges); ++i) {
    const ClassRange& r = kRanges[i];
    if (r.first > r.last || (i > 0 && kRanges[i - 1].last >= r.first)) return false;
    bool covered = false;
    for (const ClassRange& block : kCoveredBlocks)
      covered = covered || (block.first <= r.first && r.last <= block.last);
    if (!covered) return false;
  }
  return true;
}
static_assert(ranges_are_well_formed());

}  // namespace

CharClass char_class(char32_t c) {
  if (c < 0x80) {
    if (c == ' ' || (c >= '\t' && c <= '\r')) return CharClass::kWhitespace;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::kLetter;
    if (c >= '0' && c <= '9') return CharClass::kNumber;
    return CharClass::kOther;
  }
  switch (c) {  // Unicode White_Space beyond ASCII
    case 0x0085:
    case 0x00A0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return CharClass::kWhitespace;
    default:
      if (c >= 0x2000 && c <= 0x200A) return CharClass::kWhitespace;
  }
  const auto* end = std::end(kRanges);
  const auto* range = std::upper_bound(std::begin(kRanges), end, c,
                                       [](char32_t v, const ClassRange& r) { return v < r.first; });
  if (range == std::begin(kRanges)) return CharClass::kOther;
  --range;
  return c <= range->last ? range->kind : CharClass::kOther;
}

char32_t next_code_point(std::string_view text, std::size_t& pos) {
  constexpr char32_t kReplacement = 0xFFFD;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) {
    ++pos;
    return lead;
  }
  // Sequence length and the smallest code point it may encode (overlong forms are invalid).
  std::size_t length = 0;
  char32_t value = 0, minimum = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  } else {
    ++pos;
    return kReplacement;
  }
  if (pos + length > text.size()) {
    ++pos;
    return kReplacement;
  }
  for (std::size_t i = 1; i < length; ++i) {
    const unsigned char next = byte(pos + i);
    if ((next & 0xC0) != 0x80) {
      ++pos;
      return kReplacement;
    }
    value = (value << 6) | (next & 0x3F);
  }
  if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
    ++pos;
    return kReplacement;
  }
  pos += length;
  return value;
}

}  // namespace ptxb::adapt
