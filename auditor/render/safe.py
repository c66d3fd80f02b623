"""Text that came from the scanned tree or the target, made safe to print.

File names, source lines, config values, a target's stderr and its command line are
attacker-controlled as far as a terminal is concerned: an ESC sequence clears the screen,
sets the title or draws an OSC 8 hyperlink, a bidi override reorders what the reader sees,
a newline in a file name forges a finding line, and an undecodable byte in a file name
(kept by Python as a lone surrogate) crashes any UTF-8 write. These functions turn each of
those characters into a visible escape; everything else passes unchanged.

The escapes for DEL and above are ``\\uXXXX``, valid inside JSON strings too, and JSON
renderers escape C0 controls and (ensure_ascii) everything non-ASCII themselves, so one
``printable`` pass over any finished report, JSON included, is safe.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline; DEL and C1; Arabic letter mark, LRM/RLM, the bidi
# embeddings/overrides and isolates; lone surrogates (undecodable bytes of a file name).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_OR_BREAK = re.compile(_UNSAFE.pattern[:-1] + "\n\t]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    o = ord(match.group())
    if o == 0x09:
        return " "
    if o < 0x20:
        return {0x0A: "\\n", 0x0D: "\\r"}.get(o, f"\\x{o:02x}")
    if 0xDC80 <= o <= 0xDCFF:  # os.fsdecode's surrogateescape of the byte o - 0xDC00
        return f"\\x{o - 0xDC00:02x}"
    return f"\\u{o:04x}"


def undecodable_as_hex(text: str) -> str:
    """Only the undecodable bytes of a file name, as ``\\xNN`` (for JSON: lossless to read)."""
    if text.isascii():  # nearly every string of a report: a surrogate is not ASCII
        return text
    return _SURROGATE.sub(_escape, text) if _SURROGATE.search(text) else text


def printable(text: str) -> str:
    """TEXT with every control, bidi and undecodable character escaped; newlines and tabs kept."""
    return _UNSAFE.sub(_escape, text)


def one_line(value) -> str:
    """A field that must stay on one line (file name, source line, message): newlines escaped too."""
    text = value if isinstance(value, str) else str(value)
    return _UNSAFE_OR_BREAK.sub(_escape, text)


def text_lines(lines) -> str:
    """A line-oriented text report (verify, profile, sweep, diagnose): each element one line,
    whatever a phase name, file name or message inside it holds (no forged ``::error`` line)."""
    return "".join(one_line(line) + "\n" for line in lines)


# What lets a value be more than text in CommonMark / GFM, backslash-escaped: raw HTML (< >),
# links and images ([ ]), code spans (`), table cell breaks (|), a heading inside a list item
# (#), and the backslash itself. Newlines are escaped by one_line first, so no value starts
# a line. Emphasis characters are left alone: knob names are full of underscores.
_MARKDOWN = re.compile(r"([\\`<>\[\]|#])")


def md(value) -> str:
    """A value from the scanned tree or the target, as Markdown text on one line."""
    return _MARKDOWN.sub(r"\\\1", one_line(value))
