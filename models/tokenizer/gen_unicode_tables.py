#!/usr/bin/env python3
"""Generates unicode_tables.inc: the Unicode data the CLIP tokenizer needs, as the reference sees it.

The reference tokenizer runs in Python, so the tables are taken from the same Python the reference runs on:
every property is *probed* from the behaviour that the reference relies on (the `regex` module's
character classes under IGNORECASE, `str.lower`, `str.isspace`, `unicodedata.category`/`normalize`), rather
than read from the Unicode Character Database. That way the C++ tokenizer agrees with the reference even where
Python's behaviour is subtle (final sigma, case-insensitive class matching).

Usage: python3 models/tokenizer/gen_unicode_tables.py   (needs the `regex` package)
"""
import pathlib
import sys
import unicodedata

import regex

OUT = pathlib.Path(__file__).resolve().parent / "unicode_tables.inc"
MAX_CP = 0x10FFFF

# Property bits; the names are emitted into the .inc so the C++ side cannot drift from them.
FLAGS = [
    ("kLetter", "matches [\\p{L}] of the pre-tokenizer pattern (case-insensitive)"),
    ("kNumber", "matches [\\p{N}] (case-insensitive)"),
    ("kOther", "matches [^\\s\\p{L}\\p{N}] (case-insensitive)"),
    ("kDropped", "removed by the reference's text cleanup: NUL, U+FFFD, category C* except tab/LF/CR"),
    ("kCleanSpace", "turned into a space by the cleanup: space, tab, LF, CR, category Zs"),
    ("kPySpace", "str.isspace(): where str.split() splits words"),
    ("kCased", "cased, for the final-sigma rule of str.lower() (meaningful when not kCaseIgnorable)"),
    ("kCaseIgnorable", "case-ignorable, skipped by the final-sigma context scan"),
]


def is_surrogate(cp):
    return 0xD800 <= cp <= 0xDFFF


def probe_flags(cp):
    c = chr(cp)
    f = 0
    if not is_surrogate(cp):
        if LETTER.fullmatch(c):
            f |= 1 << 0
        if NUMBER.fullmatch(c):
            f |= 1 << 1
        if OTHER.fullmatch(c):
            f |= 1 << 2
    cat = unicodedata.category(c)
    if cp == 0 or cp == 0xFFFD or (cat.startswith("C") and c not in "\t\n\r"):
        f |= 1 << 3
    if c in " \t\n\r" or cat == "Zs":
        f |= 1 << 4
    if c.isspace():
        f |= 1 << 5
    # Python's lower() makes U+03A3 final ("ς") when a cased character precedes it, skipping case-ignorable
    # ones, and none follows. Probing that rule gives both properties:
    #   "XΣ" is final  <=> X is not case-ignorable and is cased
    #   "AXΣ" is final <=> X is case-ignorable (the scan reaches the cased "A") or X is cased
    final_alone = (c + "\u03a3").lower()[-1] == "\u03c2"
    final_after_a = ("A" + c + "\u03a3").lower()[-1] == "\u03c2"
    if final_alone:
        f |= 1 << 6
    elif final_after_a:
        f |= 1 << 7
    return f


LETTER = regex.compile(r"[\p{L}]", regex.IGNORECASE)
NUMBER = regex.compile(r"[\p{N}]", regex.IGNORECASE)
OTHER = regex.compile(r"[^\s\p{L}\p{N}]", regex.IGNORECASE)


def runs(values):
    """(first code point, value) wherever the value changes."""
    out, prev = [], None
    for cp, v in enumerate(values):
        if v != prev:
            out.append((cp, v))
            prev = v
    return out


def lower_runs():
    """Single-code-point lowercase mappings as (first, count, stride, delta) runs, plus multi-char ones."""
    singles, multi = [], []
    for cp in range(MAX_CP + 1):
        if is_surrogate(cp):
            continue
        lo = chr(cp).lower()
        if lo == chr(cp):
            continue
        if len(lo) == 1:
            singles.append((cp, ord(lo) - cp))
        else:
            multi.append((cp, [ord(x) for x in lo]))
    grouped = []
    for cp, delta in singles:
        if grouped:
            first, count, stride, d = grouped[-1]
            last = first + (count - 1) * stride
            if d == delta and (count == 1 and cp - last in (1, 2) or count > 1 and cp - last == stride):
                grouped[-1] = (first, count + 1, cp - last if count == 1 else stride, d)
                continue
        grouped.append((cp, 1, 1, delta))
    return grouped, multi


def nfc_tables():
    decomp, comp = [], []
    for cp in range(MAX_CP + 1):
        if is_surrogate(cp):
            continue
        d = unicodedata.decomposition(chr(cp))
        if not d or d.startswith("<"):
            continue
        parts = [int(x, 16) for x in d.split()]
        assert len(parts) in (1, 2), hex(cp)
        decomp.append((cp, parts[0], parts[1] if len(parts) == 2 else 0))
        # A primary composite is a two-part decomposition that NFC puts back together.
        if len(parts) == 2 and unicodedata.normalize("NFC", chr(parts[0]) + chr(parts[1])) == chr(cp):
            comp.append((parts[0], parts[1], cp))
    comp.sort()
    ccc = runs([0 if is_surrogate(cp) else unicodedata.combining(chr(cp)) for cp in range(MAX_CP + 1)])
    return decomp, comp, ccc


def main():
    flags = runs([probe_flags(cp) for cp in range(MAX_CP + 1)])
    lowers, lower_multi = lower_runs()
    decomp, comp, ccc = nfc_tables()
    assert all(len(seq) <= 3 for _, seq in lower_multi)

    w = []
    w.append(f"// Generated by models/tokenizer/gen_unicode_tables.py (Python {sys.version.split()[0]}, "
             f"Unicode {unicodedata.unidata_version}, regex {regex.__version__}). Do not edit.")
    w.append("// Included by unicode.cpp only, inside its anonymous namespace.")
    for i, (name, what) in enumerate(FLAGS):
        w.append(f"constexpr uint16_t {name} = 1u << {i};  // {what}")
    w.append("")
    w.append(f"// {len(flags)} runs: flags apply from `first` to the next run's first.")
    w.append("constexpr PropertyRun kPropertyRuns[] = {")
    w += wrap(f"{{0x{cp:X},0x{v:X}}}" for cp, v in flags)
    w.append("};")
    w.append(f"// {len(ccc)} runs of canonical combining class.")
    w.append("constexpr CccRun kCccRuns[] = {")
    w += wrap(f"{{0x{cp:X},{v}}}" for cp, v in ccc)
    w.append("};")
    w.append(f"// {len(lowers)} runs of one-code-point lowercase mappings: first, count, stride, delta.")
    w.append("constexpr LowerRun kLowerRuns[] = {")
    w += wrap(f"{{0x{a:X},{n},{s},{d}}}" for a, n, s, d in lowers)
    w.append("};")
    w.append("// Lowercase mappings to several code points (0 = unused slot).")
    w.append("constexpr LowerMulti kLowerMulti[] = {")
    w += wrap("{0x%X,{%s}}" % (cp, ",".join(f"0x{x:X}" for x in seq + [0] * (3 - len(seq)))) for cp, seq in lower_multi)
    w.append("};")
    w.append(f"// {len(decomp)} canonical decompositions (one level; second = 0 for singletons), by code point.")
    w.append("constexpr Decomposition kDecompositions[] = {")
    w += wrap(f"{{0x{a:X},0x{b:X},0x{c:X}}}" for a, b, c in decomp)
    w.append("};")
    w.append(f"// {len(comp)} primary composites, sorted by (first, second).")
    w.append("constexpr Composition kCompositions[] = {")
    w += wrap(f"{{0x{a:X},0x{b:X},0x{c:X}}}" for a, b, c in comp)
    w.append("};")
    OUT.write_text("\n".join(w) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(flags)} property runs, {len(ccc)} ccc runs, {len(lowers)} lowercase runs, "
          f"{len(decomp)} decompositions, {len(comp)} compositions")


def wrap(items, width=110):
    lines, line = [], "   "
    for it in items:
        if len(line) + len(it) + 2 > width:
            lines.append(line)
            line = "   "
        line += " " + it + ","
    if line.strip():
        lines.append(line)
    return lines


if __name__ == "__main__":
    main()
