"""The one exception hierarchy of cypherturn, rooted in :class:`CypherTurnError`.

Every error a user can provoke (bad input, unknown graph, unreachable endpoint,
a generated query the engine rejects) is a subclass of :class:`CypherTurnError`,
so the CLI can turn any of them into a clear message and a non-zero exit.

Query errors keep the engine's own message verbatim in ``engine_message``: that
text is the execution feedback ``m_t`` that Reflection-Augmented Scaling appends
to the context (RAS paper, §3.3 eq. 2 and Algorithm 2).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "CallAbandoned",
    "ConfigError",
    "ContextLengthError",
    "CypherParseError",
    "CypherSyntaxError",
    "CypherTurnError",
    "CypherTypeError",
    "DatasetError",
    "EngineConnectionError",
    "ErrorClass",
    "GoldWithheldError",
    "GraphError",
    "ModelError",
    "ModelIntegrityError",
    "ModelResponseError",
    "ModelTransientError",
    "ModelUnavailableError",
    "QueryCostError",
    "QueryError",
    "QueryTimeoutError",
    "RunInterrupted",
    "TimeBudgetSpent",
    "UnknownLabelError",
    "UnknownPropertyError",
    "UnknownRelationshipTypeError",
    "UnknownVariableError",
    "WriteRefusedError",
]


class ErrorClass(StrEnum):
    """Closed vocabulary of query-failure classes (the RAS paper's M_error, split by cause).

    The classes follow the failure modes the RAS paper names in §3.2
    (undefined node labels, invalid relationship types, malformed syntax) plus
    the engine-side refusals cypherturn adds (timeout, write refused).
    """

    SYNTAX = "syntax"
    UNKNOWN_LABEL = "unknown_label"
    UNKNOWN_RELATIONSHIP_TYPE = "unknown_relationship_type"
    UNKNOWN_PROPERTY = "unknown_property"
    UNKNOWN_VARIABLE = "unknown_variable"
    TYPE_ERROR = "type_error"
    TIMEOUT = "timeout"
    WRITE_REFUSED = "write_refused"
    CONNECTION = "connection"
    OTHER = "other"


class CypherTurnError(Exception):
    """Root of every error cypherturn raises on purpose."""


class ConfigError(CypherTurnError):
    """A bad option, specification string or configuration value."""


class CypherParseError(CypherTurnError):
    """cypherturn's own Cypher tokenizer or clause parser could not analyse a query.

    Distinct from :class:`CypherSyntaxError`, which carries the engine's verdict:
    this one is raised by :mod:`cypherturn.cypher` before anything is executed
    (unterminated string, unbalanced brackets, a clause it does not know).
    """


class DatasetError(CypherTurnError):
    """A dataset or graph that is unknown, missing or malformed (files, counts, schema)."""


class GraphError(CypherTurnError):
    """An error from or about a graph engine."""


class EngineConnectionError(GraphError):
    """The engine could not be started or reached (wrong URL, auth, dead server)."""

    error_class = ErrorClass.CONNECTION


class QueryError(GraphError):
    """A query that the engine refused or failed to execute.

    Attributes:
        query: the Cypher text that was sent.
        engine_message: the engine's own error message, unchanged; this is the
            feedback RAS appends to the context (RAS §3.4, Algorithm 2 line 11).
        error_class: the classified cause.
    """

    error_class: ErrorClass = ErrorClass.OTHER

    def __init__(self, engine_message: str, query: str = "") -> None:
        super().__init__(engine_message)
        self.engine_message = engine_message
        self.query = query


class CypherSyntaxError(QueryError):
    """The query does not parse."""

    error_class = ErrorClass.SYNTAX


class UnknownLabelError(QueryError):
    """The query names a node label that the graph does not have."""

    error_class = ErrorClass.UNKNOWN_LABEL


class UnknownRelationshipTypeError(QueryError):
    """The query names a relationship type that the graph does not have."""

    error_class = ErrorClass.UNKNOWN_RELATIONSHIP_TYPE


class UnknownPropertyError(QueryError):
    """The query names a property key that the graph does not have."""

    error_class = ErrorClass.UNKNOWN_PROPERTY


class UnknownVariableError(QueryError):
    """The query uses a variable that is not defined in its scope."""

    error_class = ErrorClass.UNKNOWN_VARIABLE


class CypherTypeError(QueryError):
    """A value of the wrong type reached an operator or function."""

    error_class = ErrorClass.TYPE_ERROR


class QueryTimeoutError(QueryError):
    """The query ran past its time limit and was stopped."""

    error_class = ErrorClass.TIMEOUT


class QueryCostError(QueryTimeoutError):
    """A query refused before it ran: its text shows it cannot finish inside any limit.

    Raised for work the engine cannot interrupt (a constant ``range`` of
    hundreds of millions of values). A subclass of :class:`QueryTimeoutError`,
    so it is counted as a timeout; ``engine_message`` says what was refused and why.
    """


class WriteRefusedError(QueryError):
    """A generated query tried to write; it was refused and nothing changed.

    Attributes:
        clause: the offending clause keyword (``CREATE``, ``MERGE``, ``SET``, ...).
    """

    error_class = ErrorClass.WRITE_REFUSED

    def __init__(self, engine_message: str, query: str = "", clause: str = "") -> None:
        super().__init__(engine_message, query)
        self.clause = clause


class RunInterrupted(CypherTurnError):
    """A batch run was interrupted (Ctrl-C, SIGTERM): a worker stops after its current step.

    What was logged stays on disk, and the next run with the same configuration
    resumes from it.
    """


class CallAbandoned(RunInterrupted):
    """A model call in flight was abandoned because the process is stopping (Ctrl-C, SIGTERM).

    Raised inside the call (a GGUF generation is aborted between two steps of
    llama.cpp's compute graph), never returned as a cut-short completion: a
    half-written action logged as if the model had finished it would change the
    run's records. See :func:`cypherturn.models.stop_calls`.
    """


class TimeBudgetSpent(CypherTurnError):
    """The wall-clock budget of one answer was spent before the work in progress ended.

    Raised by a model call cut at the answer's deadline, or before a query for
    which no time is left (:func:`cypherturn.models.call_limits`). The strategies
    catch it and return the best candidate found so far; it is not a model
    failure, so it is never retried or counted as an infrastructure failure.
    """


class GoldWithheldError(CypherTurnError):
    """A player asked for a gold it may not see (a bug in a protocol, never a model error).

    Players (the protocols and the user simulator) read a session through
    :class:`cypherturn.sessions.SessionView`, which holds no gold query and hands out
    an earlier turn's gold result only under oracle history (the guided protocol,
    CypherTurn App. D.5); asking for the current turn's, a later turn's, or any under
    the agentic protocol raises this.
    """


class ModelError(CypherTurnError):
    """An error from or about a chat model."""


class ModelUnavailableError(ModelError):
    """The model could not be loaded or its endpoint could not be reached."""


class ModelIntegrityError(ModelUnavailableError):
    """A model file's bytes do not match the size and SHA-256 pinned for them.

    Raised instead of loading unverified bytes; the message names the packages
    to reinstall.
    """


class ModelTransientError(ModelUnavailableError):
    """A failure of the model's endpoint that may pass: worth retrying.

    Connection errors, timeouts, HTTP 408, 409, 429 and 5xx. The model layer's
    retry policy (:class:`cypherturn.models.RetryPolicy`) retries these and no
    other error; when it gives up, this error reaches the caller.

    Attributes:
        retry_after_s: the wait the endpoint asked for (``Retry-After``), seconds,
            when it named one.
    """

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ModelResponseError(ModelError):
    """The model's endpoint answered, but not with a usable completion."""


class ContextLengthError(ModelResponseError):
    """The prompt does not fit the model's context window.

    A limit of the model, not of the infrastructure: the action loop ends the
    turn (``TurnEnd.CONTEXT_OVERFLOW``) instead of failing the session.
    """
