"""Text that came from outside (a received result file, a framework's error message) made safe
to keep and to show: control characters out, lone surrogates found, long values clipped; and
what a framework's exception says in one line, or whether it means out of memory."""

from __future__ import annotations

import unicodedata

# Bidirectional overrides and isolates reorder what a terminal or a browser shows
# ("Trojan Source"); they have no place in a label or a note.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class LoneSurrogate(ValueError):
    """The text holds half of a UTF-16 pair: it cannot be written as UTF-8."""


def without_controls(text: str, keep: str = "\n\t") -> str:
    """`text` less its control characters (C0, DEL, C1, bidi overrides), but those in `keep`.
    Raises LoneSurrogate for text no file or terminal can take."""
    if text.isprintable():      # the common case, answered in C
        return text
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat == "Cs":
            raise LoneSurrogate(text)
        if (cat == "Cc" and ch not in keep) or ch in _BIDI:
            continue
        out.append(ch)
    return "".join(out)


def one_line(text: str) -> str:
    """For a table cell or a message: line breaks and tabs as spaces, nothing else unseen,
    lone surrogates as '?'."""
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")
    if flat.isprintable():
        return flat
    return without_controls(flat.encode("utf-8", "replace").decode("utf-8"), keep="")


def clip(text: str, limit: int = 40) -> str:
    """One short line of `text` for a message: never the whole of a hostile value."""
    text = one_line(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def first_line(exc: BaseException) -> str:
    """An exception in one line for a note or a warning: frameworks' messages run to pages
    (a stack of C++ frames), their first line says what went wrong."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA and MPS say "out of memory"; the CPU allocator says "can't allocate memory"."""
    text = str(exc).lower()
    return isinstance(exc, MemoryError) or "out of memory" in text \
        or "can't allocate memory" in text or type(exc).__name__ == "OutOfMemoryError"
