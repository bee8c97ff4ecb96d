#!/usr/bin/env python3
"""Checks src/adapt/unicode_class.cc's \\p{L} / \\p{N} table against Python's unicodedata.

Every code point of the blocks the table claims (kCoveredBlocks in unicode_class.cc) must have
the class its General_Category gives (L* letter, N* number, else other). With --emit, prints
the table rows instead (how the table was made; paste them into kRanges).

  python3 testdata/adapt/tokenizer/check_unicode_classes.py [--emit]
"""
import pathlib
import re
import sys
import unicodedata

SOURCE = pathlib.Path(__file__).resolve().parents[3] / "src/adapt/unicode_class.cc"


def category_class(code_point):
    category = unicodedata.category(chr(code_point))
    return {"L": "kLetter", "N": "kNumber"}.get(category[0])


def parse_table(text, name):
    body = re.search(name + r"\[\] = \{(.*?)\n\};", text, re.S).group(1)
    return [(int(a, 16), int(b, 16), k) for a, b, k in
            re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)(?:, (\w+))?\}", body)]


def emit(blocks):
    rows, start, current = [], None, None
    for lo, hi, _ in blocks:
        for c in range(lo, hi + 2):
            k = category_class(c) if c <= hi else None
            if k != current:
                if current:
                    rows.append(f"{{0x{start:04X}, 0x{c - 1:04X}, {current}}}")
                start, current = c, k
    for i in range(0, len(rows), 3):
        print("    " + ", ".join(rows[i:i + 3]) + ",")


def main():
    text = SOURCE.read_text()
    blocks = parse_table(text, "kCoveredBlocks")
    if "--emit" in sys.argv:
        emit(blocks)
        return 0
    table = parse_table(text, "kRanges")
    def table_class(c):
        for lo, hi, k in table:
            if lo <= c <= hi:
                return k
        return None
    wrong = [c for lo, hi, _ in blocks for c in range(lo, hi + 1)
             if table_class(c) != category_class(c)]
    outside = [(lo, hi) for lo, hi, _ in table
               if not any(b_lo <= lo and hi <= b_hi for b_lo, b_hi, _ in blocks)]
    print(f"Unicode {unicodedata.unidata_version}: {len(table)} ranges, "
          f"{sum(hi - lo + 1 for lo, hi, _ in blocks)} code points checked, "
          f"{len(wrong)} wrong, {len(outside)} outside the covered blocks")
    for c in wrong[:20]:
        print(f"  U+{c:04X} {unicodedata.name(chr(c), '?')}: table {table_class(c)}, "
              f"unicodedata {category_class(c)}")
    return 1 if wrong or outside else 0


if __name__ == "__main__":
    sys.exit(main())
