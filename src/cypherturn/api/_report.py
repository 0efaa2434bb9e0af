"""`report`: the tables and figures of scored runs."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cypherturn.api._hooks import Status, quiet
from cypherturn.metrics import DEFAULT_RESAMPLES
from cypherturn.records import RunData, read_run
from cypherturn.reports import Report, ReportFormat, build_report, write_report
from cypherturn.runner import CONFIG_FILE, RunConfig

logger = logging.getLogger(__name__)

__all__ = ["ReportConfig", "ReportResult", "report"]


class ReportConfig(BaseModel):
    """What `cypherturn report` renders.

    Attributes:
        run_dirs: run directories (each with ``scores.jsonl`` and/or ``attempts.jsonl``).
        fmt: file format of the written tables.
        out: output folder (``None``: ``report/`` in the first run directory).
        resamples: bootstrap resamples of the confidence intervals.
        qer_n: scaled budget n of the QER tables.
        seed: bootstrap seed.
    """

    model_config = ConfigDict(extra="forbid")

    run_dirs: list[Path] = Field(min_length=1)
    fmt: ReportFormat = ReportFormat.MD
    out: Path | None = None
    resamples: int = DEFAULT_RESAMPLES
    qer_n: int = 5
    seed: int = 0


@dataclass(frozen=True, slots=True)
class ReportResult:
    """What :func:`report` computed and wrote.

    Attributes:
        report: every table and plot.
        written: the tables file first, then each plot.
    """

    report: Report
    written: list[Path]


def report(config: ReportConfig, *, status: Status = quiet) -> ReportResult:
    """Report on scored runs: EX, PSJS, SEM, CER, Tok/S per model and protocol, breakdowns, QER.

    Args:
        config: the runs and the report's options.
        status: wraps computing the report.

    Returns:
        The :class:`ReportResult`.

    Raises:
        DatasetError: a missing or malformed run directory.
    """
    runs = [_with_harness(read_run(path)) for path in config.run_dirs]
    with status("Computing the report ..."):
        built = build_report(
            runs, n_resamples=config.resamples, qer_n=config.qer_n, seed=config.seed
        )
    out = config.out if config.out is not None else config.run_dirs[0] / "report"
    return ReportResult(report=built, written=write_report(built, out, config.fmt))


def _with_harness(run: RunData) -> RunData:
    """The run with its harness on every record, from ``bench_config.json`` where a record lacks it.

    Records written before :attr:`~cypherturn.records.TurnRecord.harness` existed read
    as the paper's agent; their run's configuration says which harness they were
    played under, so runs that differ only in it stay separate systems.
    """
    path = run.path / CONFIG_FILE
    if not path.exists() or all(s.record.harness for s in run.scores):
        return run
    try:
        harness = RunConfig.model_validate_json(path.read_text(encoding="utf-8")).settings.harness
    except (OSError, ValidationError) as e:
        logger.warning("%s: unreadable (%s); its records keep the harness they name", path, e)
        return run
    if not harness:
        return run
    scores = [
        s
        if s.record.harness
        else s.model_copy(update={"record": s.record.model_copy(update={"harness": harness})})
        for s in run.scores
    ]
    return run.model_copy(update={"scores": scores})
