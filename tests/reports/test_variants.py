"""Run identity in reports: variants are systems of their own; engines and metric versions are named."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from cypherturn.cli import app
from cypherturn.graph import GraphEngine
from cypherturn.metrics import score_run
from cypherturn.records import (
    METRICS_VERSION,
    ProtocolName,
    RunManifest,
    TurnRecord,
    read_jsonl,
    read_run,
)
from cypherturn.reports import build_report

runner = CliRunner()

FIXTURE_GRAPH = Path(__file__).parents[1] / "metrics" / "fixture_graph.cypher"
GOLD = "MATCH (p:Person {name: 'Alice'})-[:KNOWS]->(f:Person) RETURN f.name AS name"
WRONG = "MATCH (p:Person)-[:KNOWS]->(f:Person) RETURN f.name AS name"


def _records(graph: str, variant: str, answers: list[str]) -> list[TurnRecord]:
    return [
        TurnRecord(
            run_id="run",
            model="alpha",
            protocol=ProtocolName.AGENTIC,
            budget_multiplier=3,
            variant=variant,
            session_id=f"s{s}",
            turn=1,
            graph=graph,
            gold_cypher=GOLD,
            predicted_cypher=answer,
        )
        for s, answer in enumerate(answers)
    ]


def test_base_and_variant_runs_are_two_systems(
    make_engine: Callable[..., GraphEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    engine.write(
        "\n".join(ln for ln in FIXTURE_GRAPH.read_text().splitlines() if not ln.startswith("//"))
    )
    engines = {engine.graph: engine}
    # Same run id, model, protocol, budget and sessions: only the variant tells them apart.
    score_run(_records(engine.graph, "base", [GOLD] * 2), engines, tmp_path / "base")
    score_run(
        _records(engine.graph, "persistent_schema", [WRONG] * 2),
        engines,
        tmp_path / "ps",
    )
    out = tmp_path / "report"
    result = runner.invoke(
        app,
        ["report", str(tmp_path / "base"), str(tmp_path / "ps"), "-f", "json", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text())
    systems = {(s["model"], s["variant"]): s["ex"] for s in data["summaries"]}
    assert systems == {("alpha", "base"): 1.0, ("alpha", "persistent_schema"): 0.0}
    assert set(data["ex_ci"]) == {"alpha agentic x3", "alpha agentic x3 persistent_schema"}
    main = data["tables"][0]
    variant_column = main["columns"].index("Variant")
    assert sorted(row[variant_column] for row in main["rows"]) == ["base", "persistent_schema"]


def test_records_written_before_the_variant_field_read_as_base(tmp_path: Path) -> None:
    old = {
        "run_id": "r",
        "model": "m",
        "protocol": "agentic",
        "session_id": "s",
        "turn": 1,
        "graph": "g",
        "gold_cypher": "RETURN 1",
        "predicted_cypher": None,
    }
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(old) + "\n")
    (record,) = read_jsonl(path, TurnRecord)
    assert record.variant == "base"
    assert record.system == ("m", "agentic", 3, "base", "")


def test_run_json_and_report_name_the_engine_and_the_metric_definitions(
    make_engine: Callable[..., GraphEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    engine.write(
        "\n".join(ln for ln in FIXTURE_GRAPH.read_text().splitlines() if not ln.startswith("//"))
    )
    manifest = score_run(
        _records(engine.graph, "base", [GOLD]), {engine.graph: engine}, tmp_path / "run"
    )
    info = manifest.engines[engine.graph]
    # The version is the server's own (FalkorDB's MODULE LIST), not a constant of ours.
    assert info.name == "FalkorDB" and re.fullmatch(r"\d+\.\d+\.\d+", info.version)
    assert info.version != "0.0.0"
    assert manifest.metrics_version == METRICS_VERSION
    stored = RunManifest.model_validate_json((tmp_path / "run" / "run.json").read_text())
    assert stored.engines == manifest.engines
    report = build_report([read_run(tmp_path / "run")], n_resamples=100)
    runs = next(t for t in report.tables if t.name == "runs")
    assert runs.rows == [
        [str(tmp_path / "run"), str(METRICS_VERSION), f"{engine.graph}: FalkorDB {info.version}"]
    ]


def test_manifests_written_before_the_fields_existed_still_read(tmp_path: Path) -> None:
    manifest = RunManifest.model_validate_json('{"schema_version": 1, "run_id": "r"}')
    assert (manifest.metrics_version, manifest.engines) == (1, {})


def test_runs_that_differ_only_in_their_harness_are_two_systems_compared_pairwise(
    make_engine: Callable[..., GraphEngine], tmp_path: Path
) -> None:
    from cypherturn.protocols import Framing, ProtocolSettings
    from cypherturn.runner import CONFIG_FILE, RunConfig

    engine = make_engine()
    engine.write(
        "\n".join(ln for ln in FIXTURE_GRAPH.read_text().splitlines() if not ln.startswith("//"))
    )
    engines = {engine.graph: engine}
    settings = ProtocolSettings(
        protocol=ProtocolName.AGENTIC, framing=Framing.EXPLICIT, output_note=True
    )
    assert settings.harness == "explicit, note"
    assert ProtocolSettings(protocol=ProtocolName.AGENTIC).harness == ""
    # the paper's agent, and a run whose records were written before they named their
    # harness: only its bench_config.json says what it was played under
    score_run(_records(engine.graph, "base", [WRONG] * 3), engines, tmp_path / "paper")
    score_run(_records(engine.graph, "base", [GOLD] * 3), engines, tmp_path / "harness")
    config = RunConfig(
        run_id="run", model="alpha", settings=settings, prompt_version=1, prompt_digest="d"
    )
    (tmp_path / "harness" / CONFIG_FILE).write_text(config.model_dump_json())
    out = tmp_path / "report"
    result = runner.invoke(
        app,
        [
            "report",
            str(tmp_path / "paper"),
            str(tmp_path / "harness"),
            "-f",
            "json",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "report.json").read_text())
    systems = {s["harness"]: s["ex"] for s in data["summaries"]}
    assert systems == {"": 0.0, "explicit, note": 1.0}
    assert set(data["ex_ci"]) == {"alpha agentic x3", "alpha agentic x3 [explicit, note]"}
    main = data["tables"][0]
    column = main["columns"].index("Harness")
    assert sorted(row[column] for row in main["rows"]) == ["explicit, note", "paper"]
    (comparisons,) = [t for t in data["tables"] if t["name"] == "comparisons"]
    (row,) = comparisons["rows"]
    assert row[:3] == ["alpha agentic x3", "alpha agentic x3 [explicit, note]", 3]
    assert row[3] == -1.0
