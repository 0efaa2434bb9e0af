"""The protocols' prompt files: versioned text under ``protocols/prompts/<name>.v<N>.txt``.

Templates use ``{field}`` placeholders filled by :func:`fill`, which replaces only
the named fields, so the JSON examples in the action prompt need no escaping.
The run log records :data:`PROMPT_VERSION` and :meth:`PromptSet.digest`.
"""

from __future__ import annotations

import hashlib
from importlib import resources

from pydantic import BaseModel, ConfigDict

from cypherturn.errors import ConfigError
from cypherturn.protocols._vocabulary import ActionFormat

__all__ = [
    "PROMPT_NAMES",
    "PROMPT_VERSION",
    "PromptSet",
    "action_prompt",
    "fill",
    "load_prompts",
    "with_notes",
]

PROMPT_VERSION = 1
"""Version of the packaged prompt files used by default."""
PROMPT_NAMES = (
    "actions",
    "actions_tools",
    "efficiency",
    "encouraging",
    "guided_system",
    "guided_turn",
    "agentic_system",
    "agentic_turn",
    "horizon",
    "simulator_system",
    "output",
    "chain",
)
"""Every prompt file a version must provide."""


class PromptSet(BaseModel):
    """The prompt texts of one version.

    Attributes:
        version: the version number (``N`` in ``<name>.vN.txt``).
        texts: prompt name -> template text.
    """

    model_config = ConfigDict(frozen=True)

    version: int
    texts: dict[str, str]

    def __getitem__(self, name: str) -> str:
        return self.texts[name]

    def digest(
        self,
        action_format: ActionFormat | None = None,
        *,
        output_note: bool = False,
        chain_note: bool = False,
    ) -> str:
        """SHA-256 over the names and texts, in name order (hex, 16 characters).

        Args:
            action_format: hash only the action prompt this format uses (``actions``
                for text, ``actions_tools`` for tools); ``None`` hashes every text.
                A text-format run's digest is thus the one recorded before
                ``actions_tools`` existed, and such runs still resume.
            output_note: also hash the ``output`` note (a run with
                :attr:`~cypherturn.protocols.ProtocolSettings.output_note` on); without
                it a run gets the digest recorded before the note existed, and resumes.
            chain_note: also hash the ``chain`` note, likewise
                (:attr:`~cypherturn.protocols.ProtocolSettings.chain_note`).
        """
        unused = {
            None: "",
            ActionFormat.TEXT: "actions_tools",
            ActionFormat.TOOLS: "actions",
        }[action_format]
        skipped = {unused}
        if not output_note:
            skipped.add("output")
        if not chain_note:
            skipped.add("chain")
        h = hashlib.sha256()
        for name in sorted(n for n in self.texts if n not in skipped):
            h.update(name.encode())
            h.update(b"\0")
            h.update(self.texts[name].encode())
            h.update(b"\0")
        return h.hexdigest()[:16]


def action_prompt(prompts: PromptSet, action_format: ActionFormat) -> str:
    """The action-space description for a format: ``actions`` (text) or ``actions_tools``."""
    return prompts["actions_tools" if action_format is ActionFormat.TOOLS else "actions"]


def with_notes(system: str, prompts: PromptSet, *, output_note: bool, chain_note: bool) -> str:
    """``system`` followed by the harness's notes that are on: ``output``, then ``chain``.

    Both notes are harness settings of ours, not the paper's (docs/design/protocols.md,
    "Harness settings beyond the paper"). The
    ``output`` note states the benchmark's output convention, one column named
    after the property key (``name``), ``count``, or ``<function>_<key>``, which EX
    compares (column names included, CypherTurn §6). The ``chain`` note says how a
    follow-up builds on an earlier result: from the names it lists when it shows
    them all, else by restating the earlier conditions. With both off, the system
    prompt is the paper's.
    """
    notes = [prompts[name] for name, on in (("output", output_note), ("chain", chain_note)) if on]
    return "\n\n".join([system, *notes])


def load_prompts(version: int = PROMPT_VERSION) -> PromptSet:
    """Read the packaged prompt files of one version.

    Args:
        version: which version.

    Returns:
        The :class:`PromptSet`.

    Raises:
        ConfigError: a file of that version is missing.
    """
    root = resources.files("cypherturn.protocols") / "prompts"
    texts: dict[str, str] = {}
    for name in PROMPT_NAMES:
        entry = root / f"{name}.v{version}.txt"
        try:
            texts[name] = entry.read_text(encoding="utf-8").rstrip("\n")
        except OSError as e:
            raise ConfigError(f"prompt file {name}.v{version}.txt is missing: {e}") from e
    return PromptSet(version=version, texts=texts)


def fill(template: str, **values: object) -> str:
    """Replace ``{name}`` placeholders with values, leaving other braces alone.

    Args:
        template: the template text.
        **values: placeholder name -> value (converted with ``str``).

    Returns:
        The filled text.
    """
    for name, value in values.items():
        template = template.replace("{" + name + "}", str(value))
    return template
