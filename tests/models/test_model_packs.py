"""Model packs: assembly from part packages, SHA-256 verification, the cache record, `default`.

The packs under test are real packages written to a temporary folder on
``sys.path``; their pins are computed here from the bytes written, so the
assembly code runs unchanged on them. The real Qwen packs are checked too when
they are installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cypherturn.cli import main
from cypherturn.cli._models import models_app
from cypherturn.errors import ConfigError, ModelIntegrityError, ModelUnavailableError
from cypherturn.models import (
    CACHE_DIR_ENV,
    MODEL_PACKS,
    CacheState,
    GGUFChatModel,
    ModelPack,
    PartPackage,
    cache_state,
    default_model_name,
    default_model_path,
    ensure_model_file,
    installed,
    load_model,
    model_cache_dir,
    resolve_model_spec,
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache folder; returns the folder model files go to."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return model_cache_dir()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on ``sys.path`` for part packages written by the test."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def slices(count: int, size: int = 3000) -> list[bytes]:
    """Distinct byte strings, as model slices."""
    return [os.urandom(size) for _ in range(count)]


def make_pack(
    site: Path, data: list[bytes], *, strength: int = 1, install: list[bool] | None = None
) -> ModelPack:
    """A pack of part packages pinned to ``data``; only parts marked in ``install`` are written."""
    prefix = f"ctfake_{uuid.uuid4().hex[:8]}_part"
    parts: list[PartPackage] = []
    for i, chunk in enumerate(data, start=1):
        part = PartPackage(
            distribution=f"{prefix.replace('_', '-')}{i}",
            import_name=f"{prefix}{i}",
            version="1.0.0",
            file=f"data/part{i:02d}.bin",
            size=len(chunk),
            sha256=hashlib.sha256(chunk).hexdigest(),
        )
        parts.append(part)
        if install is None or install[i - 1]:
            write_part(site, part, chunk)
    whole = b"".join(data)
    return ModelPack(
        name=f"fake-{prefix[7:15]}",
        display_name="Fake",
        parameters=1_000,
        quantization="none",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        licence="Apache-2.0",
        provenance="written by the test",
        file_name=f"{prefix}.gguf",
        parts=tuple(parts),
        extra="fake",
        strength=strength,
    )


def write_part(site: Path, part: PartPackage, chunk: bytes) -> Path:
    """Write (or overwrite) one part package's module and data slice."""
    package = site / part.import_name
    (package / "data").mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    path = package / part.file
    path.write_bytes(chunk)
    return path


def leftovers(cache: Path) -> list[str]:
    """Temporary files in the cache folder."""
    return sorted(p.name for p in cache.glob(".*.tmp")) if cache.exists() else []


def test_parts_are_assembled_verified_and_recorded(cache: Path, site: Path) -> None:
    data = slices(3)
    pack = make_pack(site, data)
    assert installed(pack) and cache_state(pack) is CacheState.ABSENT

    path = ensure_model_file(pack)

    assert path == cache / pack.file_name
    assert path.read_bytes() == b"".join(data)
    record = json.loads((cache / f"{pack.file_name}.verified.json").read_text())
    stat = path.stat()
    assert record == {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": pack.sha256}
    assert cache_state(pack) is CacheState.VERIFIED
    assert leftovers(cache) == []
    # a matching record is trusted: the file is neither rewritten nor assembled again
    assert ensure_model_file(pack) == path and path.stat().st_mtime_ns == stat.st_mtime_ns


def test_a_cached_file_without_a_record_is_verified_before_use(cache: Path, site: Path) -> None:
    data = slices(2)
    pack = make_pack(site, data, install=[False, False])
    cache.mkdir(parents=True)
    (cache / pack.file_name).write_bytes(b"".join(data))
    assert cache_state(pack) is CacheState.UNVERIFIED

    path = ensure_model_file(pack)

    assert path.read_bytes() == b"".join(data)
    assert cache_state(pack) is CacheState.VERIFIED


def test_a_modified_cache_file_is_reverified_and_rebuilt_from_the_parts(
    cache: Path, site: Path
) -> None:
    data = slices(3)
    pack = make_pack(site, data)
    path = ensure_model_file(pack)
    stat = path.stat()
    path.write_bytes(os.urandom(pack.size))
    # a distinct modification time even where the clock's tick is coarse
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert cache_state(pack) is CacheState.UNVERIFIED

    assert ensure_model_file(pack).read_bytes() == b"".join(data)
    assert cache_state(pack) is CacheState.VERIFIED
    assert leftovers(cache) == []


def test_a_corrupted_cache_file_with_a_corrupted_part_names_the_package(
    cache: Path, site: Path
) -> None:
    data = slices(3)
    pack = make_pack(site, data)
    path = ensure_model_file(pack)
    path.write_bytes(b"\0" * pack.size)
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 1_000_000_000))
    write_part(site, pack.parts[1], os.urandom(len(data[1])))

    with pytest.raises(ModelIntegrityError) as caught:
        ensure_model_file(pack)

    message = str(caught.value)
    assert f"pip install --force-reinstall {pack.parts[1].requirement}" in message
    assert pack.parts[0].distribution not in message and pack.parts[2].distribution not in message
    assert not path.exists() and leftovers(cache) == []


def test_a_corrupted_cache_file_is_rejected_when_the_parts_are_gone(
    cache: Path, site: Path
) -> None:
    data = slices(2)
    pack = make_pack(site, data, install=[False, False])
    cache.mkdir(parents=True)
    (cache / pack.file_name).write_bytes(b"x" * pack.size)

    with pytest.raises(
        ModelUnavailableError, match="failed verification and was removed"
    ) as caught:
        ensure_model_file(pack)

    assert "pip install 'cypherturn[fake]'" in str(caught.value)
    assert not (cache / pack.file_name).exists()


def test_a_wrong_part_is_rejected_and_nothing_reaches_the_final_path(
    cache: Path, site: Path
) -> None:
    data = slices(4)
    pack = make_pack(site, data)
    write_part(site, pack.parts[2], os.urandom(len(data[2])))

    with pytest.raises(ModelIntegrityError, match="do not match their pinned SHA-256") as caught:
        ensure_model_file(pack)

    assert str(caught.value).endswith(
        f"`pip install --force-reinstall {pack.parts[2].requirement}`"
    )
    assert not (cache / pack.file_name).exists()
    assert not (cache / f"{pack.file_name}.verified.json").exists()
    assert leftovers(cache) == []


def test_a_part_of_the_wrong_size_is_named_before_anything_is_written(
    cache: Path, site: Path
) -> None:
    data = slices(3)
    pack = make_pack(site, data)
    write_part(site, pack.parts[0], data[0][:-1])

    with pytest.raises(ModelIntegrityError, match="wrong size") as caught:
        ensure_model_file(pack)

    assert pack.parts[0].requirement in str(caught.value)
    assert pack.parts[1].distribution not in str(caught.value)
    assert not cache.exists() or not any(cache.iterdir())


def test_missing_part_packages_give_the_install_command(cache: Path, site: Path) -> None:
    some = make_pack(site, slices(3), install=[True, False, True])
    none = make_pack(site, slices(2), install=[False, False])
    assert not installed(some) and not installed(none)

    with pytest.raises(ModelUnavailableError) as caught:
        ensure_model_file(some)
    assert str(caught.value) == (
        f"model {some.name!r} is missing package(s) {some.parts[1].requirement}; "
        "install it with `pip install 'cypherturn[fake]'`"
    )
    with pytest.raises(ModelUnavailableError, match=r"is not installed; install it with `pip"):
        ensure_model_file(none)
    assert not cache.exists()


def test_concurrent_assemblies_in_separate_processes_all_get_the_verified_file(
    cache: Path, site: Path
) -> None:
    data = slices(3, size=4 << 20)
    pack = make_pack(site, data)
    script = (
        "import sys\n"
        "from cypherturn.models import ModelPack, ensure_model_file\n"
        f"sys.path.insert(0, {str(site)!r})\n"
        "print(ensure_model_file(ModelPack.model_validate_json(sys.stdin.read())))\n"
    )
    children = [
        subprocess.Popen(
            [sys.executable, "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outcomes = [child.communicate(pack.model_dump_json(), timeout=120) for child in children]

    assert [child.returncode for child in children] == [0, 0, 0], outcomes
    assert {out.strip() for out, _ in outcomes} == {str(cache / pack.file_name)}
    assert hashlib.sha256((cache / pack.file_name).read_bytes()).hexdigest() == pack.sha256
    assert leftovers(cache) == []
    assert ensure_model_file(pack) == cache / pack.file_name


def test_default_is_the_strongest_installed_pack(site: Path) -> None:
    weak = make_pack(site, slices(1), strength=1)
    strong = make_pack(site, slices(1), strength=5)
    absent = make_pack(site, slices(1), strength=9, install=[False])

    assert default_model_name([weak, absent, strong]) == strong.name
    assert default_model_name([weak]) == weak.name
    with pytest.raises(ModelUnavailableError, match="no local model is installed"):
        default_model_name([absent])


def test_default_loads_the_strongest_real_pack_under_its_own_name() -> None:
    model = load_model("default")

    assert isinstance(model, GGUFChatModel)
    assert model.spec == resolve_model_spec("default") == default_model_name()
    chosen = MODEL_PACKS[model.spec]
    assert installed(chosen)
    assert all(p.strength <= chosen.strength for p in MODEL_PACKS.values() if installed(p))


def test_pack_names_are_model_specs() -> None:
    model = load_model("smollm2-135m", n_ctx=1024)

    assert isinstance(model, GGUFChatModel)
    assert model.spec == "smollm2-135m" and model.path == default_model_path()
    assert resolve_model_spec("gguf:/x.gguf") == "gguf:/x.gguf"
    with pytest.raises(ConfigError, match="does not take option"):
        load_model("qwen2.5-coder-0.5b", base_url="http://127.0.0.1:1/v1")


@pytest.mark.parametrize("name", ["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"])
def test_installed_real_pack_gives_its_verified_file(name: str) -> None:
    pack = MODEL_PACKS[name]
    if not installed(pack):
        pytest.skip(f"{name} is not installed ({pack.install_command})")

    path = ensure_model_file(pack)

    assert path.name == pack.file_name and path.stat().st_size == pack.size
    assert cache_state(pack) is CacheState.VERIFIED


@pytest.mark.slow
def test_the_real_smallest_pack_assembles_from_its_packages(cache: Path) -> None:
    pack = MODEL_PACKS["qwen2.5-coder-0.5b"]
    if not installed(pack):
        pytest.skip(f"{pack.name} is not installed ({pack.install_command})")

    path = ensure_model_file(pack)
    try:
        assert path == cache / pack.file_name and path.stat().st_size == pack.size
        assert cache_state(pack) is CacheState.VERIFIED and leftovers(cache) == []
    finally:
        path.unlink()  # pytest keeps recent temporary folders; this one holds 491 MB


def test_cli_lists_every_model_with_its_install_command() -> None:
    result = CliRunner().invoke(models_app, [], terminal_width=200)

    assert result.exit_code == 0, result.output
    for pack in MODEL_PACKS.values():
        assert pack.name in result.output and pack.install_command in result.output
    assert "Apache-2.0" in result.output
    assert f"`--model default` is {default_model_name()}" in " ".join(result.output.split())


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., tuple[int, str, str]]:
    """Run the console entry point in-process: ``cli(*args) -> (exit code, stdout, stderr)``."""

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["cypherturn", *args])
        try:
            main()
            code = 0
        except SystemExit as e:
            code = int(e.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_cli_prepare_and_an_unknown_name(cli: Callable[..., tuple[int, str, str]]) -> None:
    code, out, _ = cli("models", "prepare", "smollm2-135m")
    assert code == 0 and str(default_model_path()) in out
    code, out, err = cli("models", "prepare", "llama-7b")
    assert code == 1 and "Traceback" not in out + err
    assert "unknown model 'llama-7b'; known models: qwen2.5-coder-1.5b" in " ".join(err.split())


def test_cli_model_option_resolves_default_before_the_command_runs(
    cli: Callable[..., tuple[int, str, str]],
) -> None:
    code, _, err = cli("ask", "q", "--model", "default", "--base-url", "http://127.0.0.1:9")
    assert code == 1
    assert f"not to {default_model_name()!r}" in err
