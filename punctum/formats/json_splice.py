"""JSON written back over the text it was read from: what did not change keeps its bytes.

A restore changes a few strings of an ASR result (words, texts). Writing the whole value
again with `json.dumps` would also rewrite what it did not touch: Vosk's `1.000000` becomes
`1.0`, `" : "` becomes `": "`, arrays kept on one line are spread over many. `splice` walks
the new value beside the old one instead and rewrites only the scalars (strings, numbers)
that differ, in place, so the output differs from the input only where a value changed.
Keys an object gains after its last one (both scalars: Deepgram's words gaining
"punctuated_word") are written after it, in the spacing of that last key.

    text = '{"conf" : 1.000000, "word" : "so"}'
    splice(text, json.loads(text), {"conf": 1.0, "word": "So,"}, json.dumps)
    # '{"conf" : 1.000000, "word" : "So,"}'
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

# A scalar token (a string, or a bare literal: number, true, false, null, NaN, Infinity) and
# the whitespace and brackets before it. Pre-order (each key before its value), the tokens
# are the scalars of the value in written order.
_SCALAR = re.compile(r'([ \t\n\r{}\[\],:]*)("[^"\\]*(?:\\.[^"\\]*)*"|[^ \t\n\r{}\[\],:"]+)')


class _ShapeChanged(Exception):
    """The new value has other keys, lengths or containers than the old one."""


def splice(text: str, old: Any, new: Any, dumps: Callable[[Any], str]) -> str | None:
    """`text`, which `json.loads` read as `old` (read it again rather than keep a value the
    caller may have edited since), with each scalar in which `new` differs written by
    `dumps`, and the keys an object of `new` adds after its own written after its last one
    (scalars, with the spacing and separator of that last key: Deepgram's words gaining
    "punctuated_word"); None when it cannot be written so (another shape: keys removed or
    reordered, containers added, lists of other lengths; duplicate keys in `text`; nesting
    too deep), then the caller writes `new` afresh."""
    changes: list[tuple[int, Any]] = []  # (index of the scalar in written order, new value)
    added: dict[int, list[tuple[str, Any]]] = {}  # index of an object's last key: new pairs
    try:
        count = _compare(old, new, 0, changes, added)
    except (_ShapeChanged, RecursionError):
        return None
    if not changes and not added:
        return text
    wanted = dict(changes)
    out, position, found, spacing, first_key = [], 0, -1, "", False
    keys: dict[str, str] = {}  # each added key as written
    for found, token in enumerate(_SCALAR.finditer(text)):  # one token at a time: no list
        if found in added:  # the last key of an object that gains keys: its spacing (of
            prefix = token.group(1)  # its first key: a line's, or one space as after ":")
            spacing = prefix[len(prefix.rstrip(" \t\n\r")):]
            first_key = not prefix.rstrip(" \t\n\r").endswith(",")
        if found in wanted:
            out += [text[position:token.start(2)],
                    _write_scalar(wanted[found], token.group(2), dumps)]
            position = token.end()
        if found - 1 in added:  # that key's value: the new pairs after it
            out.append(text[position:token.end()])
            position = token.end()
            if first_key and "\n" not in spacing:
                spacing = " " if token.group(1).endswith(" ") else ""
            out += [f",{spacing}{keys.get(key) or keys.setdefault(key, dumps(key))}"
                    f"{token.group(1)}{dumps(value)}" for key, value in added[found - 1]]
    if found + 1 != count:  # duplicate keys: json.loads kept one of them
        return None
    out.append(text[position:])
    return "".join(out)


def _compare(old: Any, new: Any, index: int, changes: list, added: dict) -> int:
    """Walk `old` and `new` together from scalar `index`; append the scalars that differ to
    `changes` and the scalar pairs an object gains after its last one (itself a scalar) to
    `added`; return the index after `old`'s last scalar."""
    if isinstance(old, dict):
        if not isinstance(new, dict) or list(new)[:len(old)] != list(old):
            raise _ShapeChanged
        extra = [(key, new[key]) for key in list(new)[len(old):]]
        if extra and (not old or isinstance(old[list(old)[-1]], (dict, list))
                      or any(isinstance(value, (dict, list)) for _, value in extra)):
            raise _ShapeChanged
        last_key = index
        for key, value in old.items():
            last_key = index
            index = _compare(value, new[key], index + 1, changes, added)  # + 1: the key
        if extra:
            added[last_key] = extra
        return index
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            raise _ShapeChanged
        for value, new_value in zip(old, new):
            index = _compare(value, new_value, index, changes, added)
        return index
    if isinstance(new, (dict, list)):
        raise _ShapeChanged
    if new is not old and (type(new) is not type(old) or new != old):  # NaN is itself
        changes.append((index, new))
    return index + 1


# A \u escape of a character outside ASCII (not "\\u": an escaped backslash, then "u").
_NON_ASCII_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7])")


def _write_scalar(value: Any, old: str, dumps: Callable[[Any], str]) -> str:
    """A changed scalar written by `dumps`; a string with its non-ASCII characters escaped
    where the old one (`old`, the token as written) escaped them."""
    written = dumps(value)
    escaped = old.isascii() and _NON_ASCII_ESCAPE.search(old) is not None
    if isinstance(value, str) and escaped and not written.isascii():
        written = json.dumps(value, ensure_ascii=True)
    return written
