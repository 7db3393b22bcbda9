"""Token texts for the trajectory view: the bytes each token id stands for, from the model's tokenizer.

A token's text is not ``tokenizer.decode([id])``: a byte-level BPE token can hold part of a UTF-8
character (decoded alone it is U+FFFD) and SentencePiece's ``<0xNN>`` pieces are single bytes. So
the report ships, for each id it uses, the token's **bytes**, and the page decodes a trajectory's
tokens in order with one streaming UTF-8 decoder: each token shows the characters its bytes
complete (a token that ends mid-character shows nothing; the next one shows the character).

Rules, per token string (``convert_ids_to_tokens``):

- byte-level tokenizers (GPT-2's ``bytes_to_unicode`` alphabet: Qwen, Llama 3, GPT-NeoX ...):
  each character maps back to its byte;
- ``<0xNN>`` (SentencePiece byte fallback): the byte ``NN``;
- otherwise (SentencePiece pieces, special tokens): ``convert_tokens_to_string([token])`` in UTF-8,
  with ``▁`` (U+2581) as a space.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Optional

_BYTE_PIECE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
#: files a tokenizer loads from (transformers' fast tokenizer, its config, slow tokenizers' vocabularies)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt",
                   "merges.txt", "spiece.model", "sentencepiece.bpe.model", "tiktoken.model")


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's reversible byte <-> printable character table, inverted (character -> byte): printable
    Latin-1 bytes stand for themselves, the other 68 bytes for ``chr(256 + k)`` in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    rest = [b for b in range(256) if b not in printable]
    return {**{chr(b): b for b in printable}, **{chr(256 + k): b for k, b in enumerate(rest)}}


def _byte_level(tokenizer: Any) -> bool:
    """True when the tokenizer's decoder is byte-level (a fast tokenizer whose decoder is ByteLevel)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    decoder = getattr(backend, "decoder", None) if backend is not None else None
    return decoder is not None and "ByteLevel" in repr(decoder)


def token_bytes(tokenizer: Any, ids: Iterable[int]) -> dict[int, bytes]:
    """``{id: bytes}`` for each distinct id in ``ids`` (rules in the module docstring).

    ``tokenizer`` is a transformers tokenizer. An id the tokenizer does not know maps to the text
    ``<id N>`` (the page shows it as is).
    """
    wanted = sorted(set(int(i) for i in ids))
    pieces = tokenizer.convert_ids_to_tokens(wanted)
    byte_level = _byte_level(tokenizer)
    table = _byte_decoder()
    special = set(getattr(tokenizer, "all_special_tokens", []) or [])
    added = set(getattr(tokenizer, "get_added_vocab", lambda: {})())
    out: dict[int, bytes] = {}
    for i, piece in zip(wanted, pieces):
        if piece is None:
            out[i] = f"<id {i}>".encode()
        elif piece in special or piece in added:
            out[i] = piece.encode()
        elif byte_level and all(c in table for c in piece):
            out[i] = bytes(table[c] for c in piece)
        elif m := _BYTE_PIECE.match(piece):
            out[i] = bytes([int(m.group(1), 16)])
        else:
            out[i] = tokenizer.convert_tokens_to_string([piece]).replace("\u2581", " ").encode() \
                if piece.strip("\u2581") else piece.replace("\u2581", " ").encode()
    return out


def looks_like_path(name: str) -> bool:
    """True when ``name`` means a local directory, not a hub id: it starts with ``/``, ``.`` or ``~``,
    or names something that exists."""
    return name.startswith(("/", ".", "~")) or Path(name).expanduser().exists()


def load_tokenizer(name_or_path: str, origin: Optional[str] = None) -> Any:
    """The transformers tokenizer (``AutoTokenizer``) of a model directory, or of a hub id already in
    the local Hugging Face cache. Local files only (``local_files_only=True``): a report downloads
    nothing and never waits on the network.

    Args:
        name_or_path: a model directory (:func:`looks_like_path`) or a hub id.
        origin: who named it, the start of every error message (default ``"--tokenizer NAME"``;
            ``write_report`` passes ``"--summary S.json names the model NAME"``).

    Raises:
        ValueError: transformers is not installed (``pip install "judgebox[agent]"``); a path that is
            not a directory ("no such directory"); a directory with none of :data:`TOKENIZER_FILES` (it
            says so); a directory transformers cannot load a tokenizer from (its whole reason, on one
            line); a hub id not in the local cache. Each message starts with ``origin`` and
            says to give ``--tokenizer PATH`` or ``--no-tokens``.
    """
    origin = origin or f"--tokenizer {name_or_path}"
    fix = ("the token view needs a tokenizer: give a model directory with --tokenizer PATH, or leave the token "
           "view out with --no-tokens")
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise ValueError(f"{origin}: the token view needs transformers: pip install \"judgebox[agent]\", or leave "
                         "the token view out with --no-tokens") from None
    if looks_like_path(name_or_path):
        path = Path(name_or_path).expanduser()
        if not path.is_dir():
            what = "not a directory (a file)" if path.exists() else "no such directory"
            raise ValueError(f"{origin}: {path}: {what}; {fix}")
        if not any((path / name).is_file() for name in TOKENIZER_FILES):
            raise ValueError(f"{origin}: {path} has no tokenizer files (tokenizer.json or tokenizer_config.json); {fix}")
        try:
            return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        except Exception as exc:  # transformers raises OSError, ValueError ... (some messages span lines)
            reason = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
            raise ValueError(f"{origin}: cannot load a tokenizer from the directory {path} ({type(exc).__name__}: "
                             f"{reason}); {fix}") from None
    try:
        return AutoTokenizer.from_pretrained(name_or_path, local_files_only=True)
    except Exception:  # not cached (transformers' message speaks of a connection it never tried), or a bad id
        raise ValueError(f"{origin}: the tokenizer {name_or_path} is not in the local Hugging Face cache "
                         f"(judgebox report reads local files only and downloads nothing); {fix}") from None
