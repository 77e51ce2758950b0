"""Text from outside (results files, the command line) made safe to use as a file name or to
write as UTF-8.

A results file can come from anywhere: its texts (a family, a matrix kind, a collective's name)
must never choose where mpilens writes. Every file name built from such text goes through
file_name_part.
"""

from __future__ import annotations

import hashlib
import re

# What a name keeps as it is: enough for every name mpilens itself makes ("coll-np4-bcast-oli",
# "piggyback-pack-before", "thread-sleep50-spare", "size=64K").
_KEPT = re.compile(r"[A-Za-z0-9_.,+=@-]+")
_REPLACED = re.compile(r"[^A-Za-z0-9_.,+=@-]")
# Far below NAME_MAX (255 bytes), leaving room for a prefix and an extension.
MAX_PART = 120
_HASH_CHARS = 10


def file_name_part(text: str) -> str:
    """`text` as one component of a file name: itself when it is already safe (letters, digits,
    and _ . , + = @ -; not starting with a dot; at most MAX_PART characters); otherwise its safe
    characters, the others as "_", cut to length, then "~" and a hash of the whole text. No
    result holds "/", NUL, ".." or a leading dot, and distinct texts give distinct results: a
    changed text carries a "~", which an unchanged one never holds, and the hash of its own."""
    if text and _KEPT.fullmatch(text) and not text.startswith(".") and len(text) <= MAX_PART:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    kept = _REPLACED.sub("_", text).replace("..", "__")
    if kept.startswith("."):
        kept = "_" + kept[1:]
    return f"{kept[: MAX_PART - _HASH_CHARS - 1]}~{digest}"


def printable(text: str) -> str:
    """`text` as valid Unicode: the bytes of a non-UTF-8 file name or argument (which Python
    keeps as lone surrogates) decoded as UTF-8 where they are, U+FFFD where they are not."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # A surrogate that stands for no byte ("\\ud800" in a JSON string).
        raw = text.encode("utf-8", "replace")
    return raw.decode("utf-8", "replace")
