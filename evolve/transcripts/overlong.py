"""A transcript line over the line cap, read with each of its texts cut short.

A 400 MB line is one tool result whose output is huge (a log, a dump, an image): the line is
valid JSON, and what matters for a run — which call it answers, whether it failed, the
session's ids — is in its structure and the first part of its texts. So such a line is
streamed once, in bounded memory: every JSON string keeps its first `STRING_CAP` bytes (cut
where no escape or UTF-8 character is split, then marked), everything else is kept as is,
and the result is valid JSON whenever the line was. A line that stays over the cap even so
(no JSON text: one huge number, or thousands of strings) is skipped, and counted as such.
"""

from __future__ import annotations

import re

STRING_CAP = 64 << 10  # bytes of each JSON string kept
CUT = b" [... cut: the transcript line is over evolve's line cap]"
# The rest of a JSON string: plain bytes and complete escapes, up to a quote or a chunk's end
# (a lone backslash there escapes the next chunk's first byte). Unambiguous: linear in `re`.
_CONTENT = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_HIGH_SURROGATE = re.compile(rb"(?i)\\ud[89ab][0-9a-f]{2}")


class Condenser:
    """Feed an over-long line chunk by chunk; `result()` is it with each string cut, or None."""

    def __init__(self, limit: int) -> None:
        self.limit = limit  # what the condensed line may take at most (the line cap)
        self.out = bytearray()
        self.failed = False
        self.in_string = False
        self.escaped = False  # the next byte is escaped (a backslash ended the last chunk)
        self.kept = 0  # bytes of the current string kept so far
        self.cut = False  # the current string is cut: the rest of it is dropped
        self.start = 0  # where the current string's content starts in `out`

    def feed(self, data: bytes) -> None:
        if self.failed:
            return
        at, end = 0, len(data)
        while at < end:
            if not self.in_string:
                quote = data.find(b'"', at)
                stop = end if quote < 0 else quote + 1
                self.out += data[at:stop]
                at = stop
                if quote >= 0:
                    self.in_string, self.kept, self.cut, self.start = True, 0, False, len(self.out)
            elif self.escaped:
                self._content(data[at : at + 1])
                at, self.escaped = at + 1, False
            else:
                stop = _CONTENT.match(data, at).end()  # type: ignore[union-attr] # matches empty
                self._content(data[at:stop])
                at = stop
                if at == end:
                    break
                if data[at] == 0x5C:  # a lone backslash at the chunk's end
                    self._content(data[at : at + 1])
                    at, self.escaped = at + 1, True
                else:  # the closing quote
                    self.out += (CUT if self.cut else b"") + b'"'
                    at, self.in_string = at + 1, False
            if len(self.out) > self.limit:
                self.failed, self.out = True, bytearray()
                return

    def result(self) -> bytes | None:
        """The condensed line; None when it is still over the limit or ended inside a string."""
        if self.failed or self.in_string:
            return None
        return bytes(self.out)

    def _content(self, part: bytes) -> None:
        if self.cut or not part:
            return
        room = STRING_CAP - self.kept
        if len(part) <= room:
            self.out += part
            self.kept += len(part)
            return
        self.out += part[:room]
        self.kept, self.cut = STRING_CAP, True
        self._clean_cut()

    def _clean_cut(self) -> None:
        """Drop what the cut left half-written at the string's end: an escape, a UTF-8 character."""
        out, at = self.out, self.start
        while (at := out.find(b"\\", at)) >= 0:
            size = 6 if out[at + 1 : at + 2] == b"u" else 2
            if at + size > len(out) or (at + size == len(out) and _HIGH_SURROGATE.fullmatch(out, at)):
                del out[at:]  # a half-written escape, or the first half of a surrogate pair
                break
            at += size
        for back in range(1, min(4, len(out) - self.start + 1)):
            byte = out[-back]
            if byte & 0xC0 == 0x80:
                continue  # a continuation byte: look further back for its lead
            if byte >= 0xC0 and back < (2 if byte < 0xE0 else 3 if byte < 0xF0 else 4):
                del out[-back:]  # a lead byte whose character the cut split
            break


def condense(line: bytes, limit: int) -> bytes | None:
    """`line` with each JSON string cut to STRING_CAP bytes; None when it cannot fit `limit`."""
    condenser = Condenser(limit)
    condenser.feed(line)
    return condenser.result()
