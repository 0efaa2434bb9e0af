"""The on-disk prefix store with real files: round trip, longest prefix, verification, eviction."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from cypherturn.models import CACHE_DIR_ENV, cache_root
from cypherturn.models._prefix_cache import PrefixStore, common_prefix, model_key, prefix_cache_dir


def test_a_written_entry_reads_back_and_is_found_by_its_longest_prefix(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, "model-a")
    short = store.write([1, 2, 3], b"short state")
    long = store.write([1, 2, 3, 4, 5, 6], b"long state")
    assert short is not None and long is not None

    assert store.longest([1, 2, 3, 4, 5, 6, 7, 8]) == (long, 6)
    assert store.longest([1, 2, 3, 9]) in {(short, 3), (long, 3)}
    assert store.longest([9, 9]) is None
    stored = store.read(long)
    assert stored is not None
    assert stored.tokens.tolist() == [1, 2, 3, 4, 5, 6]
    assert stored.state == b"long state"


def test_entries_of_another_model_are_not_seen(tmp_path: Path) -> None:
    PrefixStore(tmp_path, "model-a").write([1, 2, 3], b"state")

    assert PrefixStore(tmp_path, "model-b").longest([1, 2, 3]) is None


def test_an_entry_moved_under_another_model_key_is_refused(tmp_path: Path) -> None:
    path = PrefixStore(tmp_path, "model-a").write([1, 2, 3], b"state")
    assert path is not None
    other = tmp_path / "model-b"
    other.mkdir()
    moved = other / path.name
    path.rename(moved)

    store = PrefixStore(tmp_path, "model-b")

    assert store.longest([1, 2, 3]) is None
    assert not moved.exists()


@pytest.mark.parametrize("cut", [3, 12, -1])
def test_a_damaged_entry_reads_as_absent_and_is_deleted(tmp_path: Path, cut: int) -> None:
    store = PrefixStore(tmp_path, "model-a")
    path = store.write([5, 6, 7], b"x" * 100)
    assert path is not None
    path.write_bytes(path.read_bytes()[:cut])

    assert store.read(path) is None
    assert not path.exists()


def test_a_changed_state_byte_fails_the_checksum(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, "model-a")
    path = store.write([5, 6, 7], b"x" * 100)
    assert path is not None
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))

    assert store.read(path) is None


def test_writes_leave_no_temporary_file(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, "model-a")
    store.write([1], b"a")
    store.write([1], b"b")

    assert [p.name for p in store.folder.iterdir() if p.name.endswith(".tmp")] == []
    (only,) = store.folder.iterdir()
    stored = store.read(only)
    assert stored is not None and stored.state == b"b"


def test_the_least_recently_used_entries_go_first_across_models(tmp_path: Path) -> None:
    a = PrefixStore(tmp_path, "model-a", max_bytes=10_000)
    b = PrefixStore(tmp_path, "model-b", max_bytes=10_000)
    first = a.write([1], b"1" * 4_000)
    second = b.write([2], b"2" * 4_000)
    assert first is not None and second is not None
    past = time.time() - 100
    os.utime(first, (past, past))
    os.utime(second, (past + 10, past + 10))
    assert a.read(first) is not None  # reading makes it the most recent

    third = a.write([3], b"3" * 4_000)

    assert third is not None and third.exists()
    assert first.exists()
    assert not second.exists()


def test_stale_temporary_files_are_removed_and_fresh_ones_kept(tmp_path: Path) -> None:
    store = PrefixStore(tmp_path, "model-a")
    store.folder.mkdir(parents=True)
    stale = store.folder / ".dead-writer.tmp"
    fresh = store.folder / ".live-writer.tmp"
    stale.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    past = time.time() - 2 * 3600
    os.utime(stale, (past, past))

    store.write([1], b"state")

    assert not stale.exists()
    assert fresh.exists()


def test_an_unwritable_root_is_logged_not_raised(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")

    store = PrefixStore(blocker, "model-a")

    assert store.write([1], b"state") is None
    assert store.longest([1]) is None


def test_the_model_key_changes_with_the_file_and_the_context(tmp_path: Path) -> None:
    weights = tmp_path / "m.gguf"
    weights.write_bytes(b"weights")
    key = model_key(weights, 4096, "0.3.36")

    assert model_key(weights, 4096, "0.3.36") == key
    assert model_key(weights, 2048, "0.3.36") != key
    assert model_key(weights, 4096, "0.3.37") != key
    weights.write_bytes(b"other weights")
    assert model_key(weights, 4096, "0.3.36") != key


def test_the_cache_folder_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert prefix_cache_dir() == tmp_path / "xdg" / "cypherturn" / "prefix"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "cypherturn"
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "own"))
    assert prefix_cache_dir() == tmp_path / "own" / "prefix"


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix(np.array([], dtype=np.int32), [1]) == 0
    assert common_prefix([7], [8]) == 0
