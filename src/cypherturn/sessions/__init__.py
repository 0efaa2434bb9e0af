"""The CypherTurn benchmark: vocabulary, session format, generator, audits, importer and statistics.

Build sessions with :func:`plan_build` + :func:`build_sessions` (or one world at a
time with :class:`SessionGenerator`), store them with :func:`write_sessions`,
read them back with :func:`read_sessions`, show them to players without their golds
with :class:`SessionView`, check them with :func:`verify_session`,
summarise them with :func:`compute_stats`, and import the official release with
:func:`read_official` + :func:`check_reproduction`. The format is documented
field by field in ``docs/design/sessions.md``.
"""

from cypherturn.sessions._audit import AuditCode, AuditFinding, TieProbe, audit_ties, probe_ties
from cypherturn.sessions._build import (
    DEFAULT_SESSIONS,
    DEFAULT_TURNS,
    DEFAULT_WORLDS,
    BuildReport,
    GraphProvider,
    PlannedSession,
    build_sessions,
    plan_build,
)
from cypherturn.sessions._compose import ComposedTurn, compose_session
from cypherturn.sessions._divergence import (
    ANSWER_CHANGING,
    DIVERGENCE_CODES,
    DivergenceAuditor,
    text_divergences,
)
from cypherturn.sessions._format import (
    FORMAT_VERSION,
    AmbiguityInfo,
    AmbiguityKind,
    GoldResult,
    ImportCheck,
    RewriteInfo,
    Session,
    Turn,
    canonical_rows,
    read_sessions,
    write_sessions,
)
from cypherturn.sessions._generator import SessionGenerator
from cypherturn.sessions._hints import WorldHints, load_hints
from cypherturn.sessions._importer import (
    FileReport,
    TurnCheck,
    check_reproduction,
    compare_results,
    read_official,
)
from cypherturn.sessions._rewrite import rewrite_sessions
from cypherturn.sessions._skeleton import (
    AggFunc,
    BlockType,
    Condition,
    QueryBlock,
    Skeleton,
    SortKey,
)
from cypherturn.sessions._stats import BenchmarkStats, Tally, compute_stats
from cypherturn.sessions._templates import PersonaProfile, Register, TemplateBank, load_bank
from cypherturn.sessions._verify import verify_session
from cypherturn.sessions._view import PlayerTurn, SessionView
from cypherturn.sessions._vocab import (
    AGGREGATION_PHENOMENA,
    CHAIN_DEPENDENT_MODES,
    ChainMode,
    Persona,
    Phenomenon,
    PhenomenonCategory,
    category_of,
    chain_mode_of,
    is_chain_dependent,
)

__all__ = [
    "AGGREGATION_PHENOMENA",
    "ANSWER_CHANGING",
    "CHAIN_DEPENDENT_MODES",
    "DEFAULT_SESSIONS",
    "DEFAULT_TURNS",
    "DEFAULT_WORLDS",
    "DIVERGENCE_CODES",
    "FORMAT_VERSION",
    "AggFunc",
    "AmbiguityInfo",
    "AmbiguityKind",
    "AuditCode",
    "AuditFinding",
    "BenchmarkStats",
    "BlockType",
    "BuildReport",
    "ChainMode",
    "ComposedTurn",
    "Condition",
    "DivergenceAuditor",
    "FileReport",
    "GoldResult",
    "GraphProvider",
    "ImportCheck",
    "Persona",
    "PersonaProfile",
    "Phenomenon",
    "PhenomenonCategory",
    "PlannedSession",
    "PlayerTurn",
    "QueryBlock",
    "Register",
    "RewriteInfo",
    "Session",
    "SessionGenerator",
    "SessionView",
    "Skeleton",
    "SortKey",
    "Tally",
    "TemplateBank",
    "TieProbe",
    "Turn",
    "TurnCheck",
    "WorldHints",
    "audit_ties",
    "build_sessions",
    "canonical_rows",
    "category_of",
    "chain_mode_of",
    "check_reproduction",
    "compare_results",
    "compose_session",
    "compute_stats",
    "is_chain_dependent",
    "load_bank",
    "load_hints",
    "plan_build",
    "probe_ties",
    "read_official",
    "read_sessions",
    "rewrite_sessions",
    "text_divergences",
    "verify_session",
    "write_sessions",
]
