"""Evaluated prompt-prefix states of llama.cpp models, kept on disk across processes.

llama.cpp reuses the evaluated prefix of the previous prompt within one
process. This store keeps such states in files, so that the first call of a
new process that starts with a known prefix (a graph's system prompt with its
schema and few-shot examples) loads the prefix instead of evaluating it again.

llama-cpp-python's own ``LlamaDiskCache`` is not used: it removes an entry
when it reads it (a second process finds nothing), pickles the whole
``LlamaState`` including its ``n_batch x n_vocab`` score buffer (311 MB for a
Qwen2.5 vocabulary) after every completion, prints to stderr on every write,
and an unreadable pickle raises whatever unpickling raises.

One entry is one file ``<root>/<model key>/<sha256 of its tokens>.state``:
a magic line, the length of a JSON header, the header (format, model key,
tokens, state size, SHA-256 of tokens and state), then llama.cpp's state
bytes (``llama_state_get_data``). Files are written to a temporary name and
renamed (atomic); a file that does not read back exactly (short, wrong magic,
bad header, checksum mismatch) is deleted and treated as absent. The total
size is bounded: after each write the least recently used entries of every
model go first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import struct
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ValidationError

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_PREFIX_CACHE_BYTES",
    "PrefixStore",
    "StoredPrefix",
    "cache_root",
    "common_prefix",
    "model_key",
    "prefix_cache_dir",
]

logger = logging.getLogger(__name__)

CACHE_DIR_ENV = "CYPHERTURN_CACHE_DIR"
"""Environment variable that overrides the cache folder."""

DEFAULT_PREFIX_CACHE_BYTES = 2 << 30
"""Most bytes the prefix store keeps on disk, all models together (2 GiB)."""

FORMAT_VERSION = 1
"""Version of the entry layout; part of the model key, so a new layout never reads an old file."""

_MAGIC = b"CTPREFIX"
_LENGTH = struct.Struct("<Q")
_MAX_HEADER_BYTES = 64 << 20
_SUFFIX = ".state"
_STALE_TEMP_S = 3600.0
"""A temporary file this old is left over from a writer that died; eviction removes it."""

Tokens = npt.NDArray[np.int32]


def cache_root() -> Path:
    """The cypherturn cache folder.

    ``$CYPHERTURN_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/cypherturn``,
    else ``~/.cache/cypherturn``. It is not created here.
    """
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "cypherturn"


def prefix_cache_dir() -> Path:
    """The folder of the prefix store: ``prefix/`` under :func:`cache_root`."""
    return cache_root() / "prefix"


def model_key(path: Path, n_ctx: int, llama_cpp_version: str) -> str:
    """The key of one loaded model's entries (a 24-hex-digit digest).

    A state only fits the weights, context size and llama.cpp build it was
    taken from, so all of them are in the key: the file by resolved path, size
    and modification time (hashing a 1 GB file on every start would cost more
    than the cache saves), ``n_ctx``, the llama-cpp-python version and
    :data:`FORMAT_VERSION`.

    Raises:
        OSError: the model file cannot be read (stat).
    """
    info = path.stat()
    identity = {
        "path": str(path.resolve()),
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
        "n_ctx": n_ctx,
        "llama_cpp": llama_cpp_version,
        "format": FORMAT_VERSION,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def common_prefix(a: npt.ArrayLike, b: npt.ArrayLike) -> int:
    """Length of the longest common prefix of two token sequences."""
    x, y = np.asarray(a), np.asarray(b)
    n = min(len(x), len(y))
    mismatch = np.flatnonzero(x[:n] != y[:n])
    return int(mismatch[0]) if mismatch.size else n


class _Header(BaseModel):
    format: int
    model: str
    tokens: list[int]
    state_bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class StoredPrefix:
    """One entry read back and verified.

    Attributes:
        tokens: the evaluated tokens the state holds, in order.
        state: llama.cpp's state bytes (``llama_state_set_data`` input).
        path: the entry's file.
    """

    tokens: Tokens
    state: bytes
    path: Path


def _digest(tokens: Tokens, state: bytes) -> str:
    h = hashlib.sha256(tokens.astype("<i4").tobytes())
    h.update(state)
    return h.hexdigest()


class PrefixStore:
    """The entries of one model (one :func:`model_key`) under a root folder.

    Not thread-safe by itself: callers serialise calls per model (the GGUF
    model's lock). Several processes may share a root: writes are atomic
    renames, and an entry removed by another process's eviction reads as absent.

    Args:
        root: the store's folder (:func:`prefix_cache_dir`).
        key: the model's key.
        max_bytes: bound on the total size of all entries under ``root``.
    """

    def __init__(
        self, root: Path, key: str, *, max_bytes: int = DEFAULT_PREFIX_CACHE_BYTES
    ) -> None:
        self._root = root
        self._key = key
        self._folder = root / key
        self._max_bytes = max_bytes
        self._headers: dict[Path, tuple[int, Tokens]] = {}

    @property
    def folder(self) -> Path:
        """The folder of this model's entries."""
        return self._folder

    def longest(self, tokens: npt.ArrayLike) -> tuple[Path, int] | None:
        """The entry sharing the longest token prefix with ``tokens``.

        Only headers are read (and remembered per file modification time).

        Returns:
            The entry's file and the length of the shared prefix, or ``None``
            when no entry shares a token.
        """
        best: tuple[Path, int] | None = None
        for path in self._entries():
            stored = self._header_tokens(path)
            if stored is None:
                continue
            shared = common_prefix(stored, tokens)
            if shared > 0 and (best is None or shared > best[1]):
                best = (path, shared)
        return best

    def read(self, path: Path) -> StoredPrefix | None:
        """Read and verify one entry; a bad entry is deleted and ``None`` returned.

        Reading marks the entry as recently used (its modification time).
        """
        try:
            with path.open("rb") as f:
                header = self._read_header(f)
                # one byte more than announced tells a file with trailing bytes from an exact one
                state = f.read(header.state_bytes + 1) if header is not None else b""
        except OSError as e:
            logger.debug("prefix cache entry %s unreadable: %s", path, e)
            return None
        tokens = np.asarray(header.tokens if header is not None else [], dtype=np.int32)
        if (
            header is None
            or len(state) != header.state_bytes
            or _digest(tokens, state) != header.sha256
        ):
            logger.warning("ignoring a corrupt prefix cache entry %s (deleted)", path)
            self._discard(path)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return StoredPrefix(tokens=tokens, state=state, path=path)

    def discard(self, path: Path) -> None:
        """Delete an entry that read back but did not load (an incompatible state)."""
        logger.warning("ignoring a prefix cache entry llama.cpp cannot load: %s (deleted)", path)
        self._discard(path)

    def write(self, tokens: npt.ArrayLike, state: bytes) -> Path | None:
        """Store a state of ``tokens``, then evict the oldest entries beyond the bound.

        Returns:
            The entry's file, or ``None`` when it could not be written (the
            reason is logged; a cache that cannot be written only costs time).
        """
        array = np.asarray(tokens, dtype=np.int32)
        header = _Header(
            format=FORMAT_VERSION,
            model=self._key,
            tokens=array.tolist(),
            state_bytes=len(state),
            sha256=_digest(array, state),
        )
        encoded = header.model_dump_json().encode()
        name = hashlib.sha256(array.astype("<i4").tobytes()).hexdigest()[:32] + _SUFFIX
        target = self._folder / name
        try:
            self._folder.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(dir=self._folder, prefix=".", suffix=".tmp")
        except OSError as e:
            logger.warning("cannot write the prefix cache in %s: %s", self._folder, e)
            return None
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC)
                f.write(_LENGTH.pack(len(encoded)))
                f.write(encoded)
                f.write(state)
            os.replace(tmp_name, target)
        except OSError as e:
            logger.warning("cannot write prefix cache entry %s: %s", target, e)
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
            return None
        self._evict()
        return target

    def _entries(self) -> list[Path]:
        try:
            return sorted(p for p in self._folder.iterdir() if p.name.endswith(_SUFFIX))
        except OSError:
            return []

    def _header_tokens(self, path: Path) -> Tokens | None:
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            self._headers.pop(path, None)
            return None
        known = self._headers.get(path)
        if known is not None and known[0] == mtime:
            return known[1]
        try:
            with path.open("rb") as f:
                header = self._read_header(f)
        except OSError:
            return None
        if header is None:
            self._discard(path)
            return None
        tokens = np.asarray(header.tokens, dtype=np.int32)
        self._headers[path] = (mtime, tokens)
        return tokens

    def _read_header(self, f: BinaryIO) -> _Header | None:
        if f.read(len(_MAGIC)) != _MAGIC:
            return None
        raw_length = f.read(_LENGTH.size)
        if len(raw_length) != _LENGTH.size:
            return None
        (length,) = _LENGTH.unpack(raw_length)
        if length > _MAX_HEADER_BYTES:
            return None
        try:
            header = _Header.model_validate_json(f.read(length))
        except ValidationError:
            return None
        if header.format != FORMAT_VERSION or header.model != self._key or header.state_bytes < 0:
            return None
        return header

    def _discard(self, path: Path) -> None:
        self._headers.pop(path, None)
        with contextlib.suppress(OSError):
            path.unlink()

    def _evict(self) -> None:
        """Remove least recently used entries (all models) until the total fits the bound."""
        entries: list[tuple[int, int, Path]] = []
        now = time.time()
        try:
            folders = [p for p in self._root.iterdir() if p.is_dir()]
        except OSError:
            return
        for folder in folders:
            try:
                files = list(folder.iterdir())
            except OSError:
                continue
            for path in files:
                try:
                    info = path.stat()
                except OSError:
                    continue
                if path.name.endswith(".tmp"):
                    if now - info.st_mtime > _STALE_TEMP_S:
                        with contextlib.suppress(OSError):
                            path.unlink()
                    continue
                if path.name.endswith(_SUFFIX):
                    entries.append((info.st_mtime_ns, info.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self._max_bytes:
                break
            logger.debug("prefix cache: evicting %s (%d bytes)", path, size)
            self._discard(path)
            total -= size
