"""Peers side by side: LangChain and neo4j-graphrag on cypherturn's ask benchmark, same model.

Run, on one question file, in one run directory::

    cypherturn bench ask QUESTIONS --model qwen2.5-coder-1.5b --strategy 'single,ras,ras+' --out DIR
    python benchmarks/bench_peers.py QUESTIONS DIR      # needs: pip install -e '.[peers]'
    cypherturn report DIR

The peers' answers are appended to ``DIR/answers.jsonl`` as ask answers whose
harness is ``peer``, so ``cypherturn report`` puts them in one table with
cypherturn's systems: the same questions, the same gold labels (this script
re-labels every gold and stops if a label differs from ``DIR/golds.jsonl``),
the same engine, the same scorer. Resumable: an answered (system, question) is
skipped. Progress goes to stderr.

Systems, each on the local GGUF of ``--model`` through LangChain's ``ChatLlamaCpp``
(the in-process llama.cpp adapter both peers accept):

* ``langchain-falkordbqa``: ``FalkorDBQAChain`` with its default prompt over
  LangChain's ``FalkorDBGraph`` (its schema reader, its executor), as LangChain's
  FalkorDB page shows it, with ``return_direct=True`` so that it returns the rows
  instead of a prose answer (a documented option; it skips the second,
  answer-writing model call).
* ``langchain-cypherqa`` and ``langchain-cypherqa-validate``: the generic
  ``GraphCypherQAChain`` over the same ``FalkorDBGraph``, without and with
  ``validate_cypher``. In langchain-community 0.4.2 it cannot be built on that graph
  class (``construct_schema`` reads property dicts where ``FalkorDBGraph`` gives
  key names); each question then counts failed, with that reason.
* ``graphrag-text2cypher``: ``Text2CypherRetriever`` as shipped. It needs a
  ``neo4j.Driver``; it is given one on the Bolt endpoint of an embedded FalkorDB.
  If it cannot be built or run there, every question is counted failed with the reason.
* ``graphrag-prompt``: a separate, labelled row: ``Text2CypherTemplate`` (its default
  prompt, the schema in its ``format_schema`` layout, built from the same
  introspection cypherturn uses) and its ``extract_cypher``, run by cypherturn's
  read-only executor. It measures the peer's prompt where its retriever cannot run.

Settings, the peers' best fair setup: temperature 0 and seed 0 (one greedy
sample, the best single shot), ``max_tokens`` 512 and ``n_ctx`` 8192 (cypherturn's
values; ``ChatLlamaCpp``'s defaults, 256 and 512, cut the schema off), and
``rope_freq_base`` read from the GGUF (``ChatLlamaCpp`` sets 10000 unless told,
which breaks Qwen2.5's 1,000,000). LangChain's chain runs its queries itself, with
write access: it runs on a copy of each graph (``GRAPH.COPY``), dropped at the end.
Every peer's final query is scored by executing it with cypherturn's read-only
executor (same timeout, same row cap), as cypherturn's own final queries are.
Systems run one after another, each over the questions in file order, so that a
peer's prompt prefix stays cached in llama.cpp between questions (its latency at
its best; cypherturn keeps its own prefix states on disk).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from cypherturn import api
from cypherturn.cypher import output_order
from cypherturn.errors import CypherTurnError
from cypherturn.experiments import AskItem, check_golds, read_answers, read_ask_items
from cypherturn.graph import (
    EmbeddedFalkorDB,
    GraphEngine,
    GraphSchema,
    QueryResult,
    default_data_dir,
)
from cypherturn.metrics import ex_scores
from cypherturn.models import GGUFChatModel, load_model, model_threads
from cypherturn.records import (
    ANSWERS_FILE,
    GOLDS_FILE,
    AskAnswer,
    GoldCheck,
    Harness,
    JsonlAppender,
)

SYSTEMS = (
    "langchain-falkordbqa",
    "langchain-cypherqa",
    "langchain-cypherqa-validate",
    "graphrag-text2cypher",
    "graphrag-prompt",
)
N_CTX = 8192
MAX_TOKENS = 512


def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _gguf(spec: str) -> tuple[str, Path, float]:
    """(the model's spec, its GGUF path, the rope_freq_base its metadata declares)."""
    import llama_cpp

    model = load_model(spec)
    if not isinstance(model, GGUFChatModel):
        raise SystemExit(f"error: {spec} is not a local GGUF model")
    meta = llama_cpp.Llama(str(model.path), vocab_only=True, verbose=False).metadata
    arch = meta.get("general.architecture", "")
    return model.spec, model.path, float(meta.get(f"{arch}.rope.freq_base", 10000.0))


def _chat_llm(path: Path, rope_freq_base: float, seed: int) -> Any:
    from langchain_community.chat_models import ChatLlamaCpp

    return ChatLlamaCpp(
        model_path=str(path),
        n_ctx=N_CTX,
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        seed=seed,
        rope_freq_base=rope_freq_base,
        n_threads=model_threads(),
        verbose=False,
    )


def _graphrag_schema(schema: GraphSchema) -> str:
    """Our introspected schema in neo4j-graphrag's own ``format_schema`` layout."""
    from neo4j_graphrag.schema import format_schema

    structured = {
        "node_props": {
            label.label: [{"property": k, "type": t} for k, t in label.properties.items()]
            for label in schema.labels
        },
        "rel_props": {
            rel.type: [{"property": k, "type": t} for k, t in rel.properties.items()]
            for rel in schema.relationship_types
            if rel.properties
        },
        "relationships": [
            {"start": p.source, "type": p.type, "end": p.target} for p in schema.patterns
        ],
    }
    return format_schema(structured, is_enhanced=False)


def _wait_copied(client: Any, graph: str, copy: str, timeout_s: float = 120.0) -> None:
    """GRAPH.COPY returns before the copy can be read: wait until it holds what the source does."""
    count = "MATCH (n) RETURN count(n)"
    want = client.select_graph(graph).ro_query(count).result_set
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if copy in client.list_graphs():
            try:
                if client.select_graph(copy).ro_query(count).result_set == want:
                    return
            except Exception:  # the copy is not readable yet
                pass
        time.sleep(0.2)
    raise SystemExit(f"error: the copy {copy} of {graph} was not complete after {timeout_s:.0f} s")


class _Peers:
    """The peer systems over the embedded server, one LLM, and copies of the graphs."""

    def __init__(self, llm: Any, engines: dict[str, GraphEngine], stack: ExitStack) -> None:
        self.llm = llm
        self.engines = engines
        self.stack = stack
        self.server = stack.enter_context(EmbeddedFalkorDB(default_data_dir()))
        self._copies: dict[str, str] = {}
        self._chains: dict[tuple[str, bool], Any] = {}
        self._schemas: dict[str, str] = {}
        self._text2cypher_error: str | None = None

    def _copy(self, graph: str) -> str:
        """A scratch copy of ``graph`` that a peer with write access may change."""
        if graph not in self._copies:
            copy = f"peers_copy_{graph}"
            client = self.server.client()
            if copy in client.list_graphs():
                client.select_graph(copy).delete()
            client.connection.execute_command("GRAPH.COPY", graph, copy)
            _wait_copied(client, graph, copy)
            self.stack.callback(lambda: self.server.client().select_graph(copy).delete())
            self._copies[graph] = copy
        return self._copies[graph]

    def _falkordb_graph(self, graph: str) -> Any:
        from langchain_community.graphs import FalkorDBGraph

        return FalkorDBGraph(
            database=self._copy(graph),
            host="127.0.0.1",
            port=self.server.port,
            password=self.server.password,
        )

    def falkordb_qa(self, item: AskItem) -> str:
        """LangChain's FalkorDB chain, as its FalkorDB page shows it."""
        from langchain_community.chains.graph_qa.falkordb import FalkorDBQAChain

        key = ("falkordbqa", item.graph)
        if key not in self._chains:
            self._chains[key] = FalkorDBQAChain.from_llm(
                self.llm,
                graph=self._falkordb_graph(item.graph),
                return_direct=True,
                return_intermediate_steps=True,
                allow_dangerous_requests=True,
            )
        out = self._chains[key].invoke({"query": item.question})
        return str(out["intermediate_steps"][0]["query"])

    def cypher_qa(self, item: AskItem, validate: bool) -> str:
        """LangChain's generic GraphCypherQAChain over its FalkorDBGraph."""
        from langchain_community.chains.graph_qa.cypher import GraphCypherQAChain

        key = ("cypherqa", item.graph, validate)
        if key not in self._chains:
            try:
                self._chains[key] = GraphCypherQAChain.from_llm(
                    llm=self.llm,
                    graph=self._falkordb_graph(item.graph),
                    validate_cypher=validate,
                    return_direct=True,
                    return_intermediate_steps=True,
                    allow_dangerous_requests=True,
                )
            except Exception as e:
                raise RuntimeError(
                    f"GraphCypherQAChain.from_llm cannot be built on FalkorDBGraph: "
                    f"{type(e).__name__}: {e}"
                ) from e
        out = self._chains[key].invoke({"query": item.question})
        return str(out["intermediate_steps"][0]["query"])

    def graphrag_prompt(self, item: AskItem) -> str:
        from neo4j_graphrag.generation.prompts import Text2CypherTemplate
        from neo4j_graphrag.retrievers.text2cypher import extract_cypher

        if item.graph not in self._schemas:
            self._schemas[item.graph] = _graphrag_schema(self.engines[item.graph].schema())
        prompt = Text2CypherTemplate().format(
            schema=self._schemas[item.graph], examples="", query_text=item.question
        )
        return extract_cypher(str(self.llm.invoke(prompt).content))

    def text2cypher(self, item: AskItem) -> str:
        if self._text2cypher_error is None:
            self._text2cypher_error = _try_text2cypher(self.llm)
        raise RuntimeError(self._text2cypher_error)


def _try_text2cypher(llm: Any) -> str:
    """Build ``Text2CypherRetriever`` on FalkorDB's Bolt endpoint; the reason it fails."""
    import neo4j
    from neo4j_graphrag.retrievers import Text2CypherRetriever

    with EmbeddedFalkorDB(Path(tempfile.mkdtemp()) / "falkordb", bolt_port=0) as server:
        auth = ("falkordb", server.password)
        with neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{server.bolt_port}", auth=auth) as d:
            try:
                Text2CypherRetriever(driver=d, llm=llm)
            except Exception as e:
                return f"cannot be built on FalkorDB's Bolt endpoint: {type(e).__name__}: {e}"
    return "was built, but this script does not run it (update the script)"


@contextmanager
def _engines(graphs: set[str]) -> Iterator[dict[str, GraphEngine]]:
    with ExitStack() as stack:
        yield {g: stack.enter_context(api.connect(g)) for g in sorted(graphs)}


def _golds(
    items: list[AskItem], engines: dict[str, GraphEngine], run: Path
) -> list[tuple[GoldCheck, QueryResult | None]]:
    checked = check_golds(items, engines.__getitem__)
    stored = {
        c.question_id: c
        for c in (
            GoldCheck.model_validate_json(line)
            for line in (run / GOLDS_FILE).read_text().splitlines()
            if line.strip()
        )
    }
    for check, _ in checked:
        old = stored.get(check.question_id)
        if old is not None and (old.status, old.digest) != (check.status, check.digest):
            raise SystemExit(
                f"error: {check.question_id}: the run labelled its gold {old.status.value} "
                f"({old.rows} rows), this engine gives {check.status.value} ({check.rows} rows)"
            )
    return checked


_BARE_CYPHER = re.compile(r"\A\s*cypher\s+(?=[A-Za-z])(?![A-Za-z_]\w*\s*=)", re.IGNORECASE)


def _score(
    item: AskItem, check: GoldCheck, gold: QueryResult, engine: GraphEngine, query: str
) -> tuple[bool, int, int, str | None]:
    # FalkorDB runs "CYPHER" with no parameters as the query after it (a ```cypher fence
    # the peer's extractor left); cypherturn's executor refuses every CYPHER prefix, as
    # it may bind parameters its checks cannot see, so the peer is scored without it
    query = _BARE_CYPHER.sub("", query, count=1)
    try:
        predicted = engine.execute(query)
    except CypherTurnError as e:
        return False, 0, 0, f"{type(e).__name__}: {e}"
    ex, relaxed = ex_scores(gold, predicted, output_order(check.gold))
    return True, ex, relaxed, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", help="the question file `bench ask` ran")
    parser.add_argument("run", type=Path, help="the `bench ask` run directory")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--limit", type=int, default=None, help="the first N usable questions")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown systems {unknown}; known: {', '.join(SYSTEMS)}")
    if not (args.run / GOLDS_FILE).is_file():
        parser.error(f"{args.run} is not a `bench ask` run directory (no {GOLDS_FILE})")
    try:
        ask_set = read_ask_items(args.questions)
    except CypherTurnError as e:
        parser.error(str(e))
    spec, path, rope = _gguf(args.model)
    _note(f"{spec}: {path.name}, rope_freq_base {rope:g} (from the GGUF)")
    done = {
        (a.strategy, a.question_id) for a in read_answers(args.run) if a.harness is Harness.PEER
    }
    with _engines({i.graph for i in ask_set.items}) as engines, ExitStack() as stack:
        checked = _golds(ask_set.items, engines, args.run)
        usable = [
            (i, c, g) for i, (c, g) in zip(ask_set.items, checked, strict=True) if g is not None
        ]
        usable = usable[: args.limit] if args.limit else usable
        llm = _chat_llm(path, rope, args.seed)
        peers = _Peers(llm, engines, stack)
        runners: dict[str, Callable[[AskItem], str]] = {
            "langchain-falkordbqa": peers.falkordb_qa,
            "langchain-cypherqa": lambda i: peers.cypher_qa(i, False),
            "langchain-cypherqa-validate": lambda i: peers.cypher_qa(i, True),
            "graphrag-text2cypher": peers.text2cypher,
            "graphrag-prompt": peers.graphrag_prompt,
        }
        # system by system, in file order: a peer's prompt prefix (its template and the
        # schema) stays in llama.cpp's KV cache from one question to the next, as for a
        # user asking in a row; interleaved, every question re-read the whole prompt
        # (about 40 s a question on 2 cores instead of a few)
        todo = [(s, u) for s in systems for u in usable if (s, u[0].id) not in done]
        _note(f"{len(usable)} usable questions x {len(systems)} systems: {len(todo)} to answer")
        with JsonlAppender(args.run / ANSWERS_FILE) as out:
            for n, (system, (item, check, gold)) in enumerate(todo, start=1):
                started = time.perf_counter()
                query, error = "", None
                try:
                    query = runners[system](item)
                except Exception as e:  # a peer's failure is its answer: counted, with its reason
                    error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:500]
                seconds = time.perf_counter() - started
                executable, ex, relaxed = False, 0, 0
                if error is None:
                    executable, ex, relaxed, error = _score(
                        item, check, gold, engines[item.graph], query
                    )
                out.append(
                    AskAnswer(
                        ask_set=ask_set.name,
                        split=ask_set.split,
                        model=spec,
                        strategy=system,
                        budget=1,
                        prompt="theirs",
                        harness=Harness.PEER,
                        question_id=item.id,
                        graph=item.graph,
                        category=item.category,
                        phenomena=list(item.phenomena),
                        gold_status=check.status,
                        executable=executable,
                        ex=ex,
                        ex_relaxed=relaxed,
                        attempts=1,
                        tokens=0,
                        seconds=seconds,
                        final_query=query,
                        error=error,
                    )
                )
                _note(f"[{n}/{len(todo)}] {system} {item.id}: rEX {relaxed} ({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
