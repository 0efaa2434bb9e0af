"""World declarations as data: the YAML files under ``cypherturn/worlds/data/``.

Why data and not code: docs/design/worlds.md, "One declaration per world, as data".

A synthetic world is a data file and a generator. The data file holds
everything that is vocabulary or declaration; the generator (a
:class:`~cypherturn.worlds._synthetic.SyntheticWorld` subclass) holds the
topology rules, and reads the vocabulary it needs from :class:`WorldData`.
A file has five sections::

    info:          the catalogue entry (WorldInfo: name, title, kind, description, source,
                   expected_nodes, expected_relationships, topology)
    vocabulary:    named word lists (``name: [a, b]``) and groups of lists
                   (``name: {group: [a, b]}``) for templates, one_of draws and the generator
    templates:     named text templates the generator fills with its own parameters
    labels:        label -> count (at scale 1), minimum, key (default ``name``),
                   extends (secondary labels), properties
    relationships: "(Source)-[:TYPE]->(Target)" -> properties

A property is its type name (``INTEGER``) or a mapping ``{type, draw, missing,
optional}``; ``draw`` is one of the distributions of ``_synthetic`` named by
``kind`` (``uniform_int``, ``normal_int``, ``lognormal_int``, ``lognormal_float``,
``normal_float``, ``beta_float``, ``one_of``, ``chance``, ``date_between``) with
its parameters, or ``{kind: text, template: "..."}``.

A template is literal text with placeholders, drawn left to right from the
build's generator: ``{word:STYLE}`` and ``{person:STYLE}`` (a fictional word or
full name, ``_names``), ``{pick:LIST}`` (one element of a vocabulary list or a
shared list of ``names.yaml``), ``{int:LOW:HIGH}`` and ``{roman:LOW:HIGH}`` (a
uniform integer, as digits or a Roman numeral), each optionally ``|lower``; a
bare ``{name}`` is a parameter the generator supplies (:meth:`WorldData.text`).

Every reference is resolved when the file is loaded, so a typo is a
:class:`~cypherturn.errors.DatasetError` naming the file, never a failure in
the middle of a build.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cypherturn.errors import DatasetError
from cypherturn.worlds import _names
from cypherturn.worlds._base import WorldInfo
from cypherturn.worlds._synthetic import (
    Draw,
    LabelDecl,
    Prop,
    PropertyType,
    RelDecl,
    WorldSpec,
    beta_float,
    chance,
    date_between,
    lognormal_float,
    lognormal_int,
    normal_float,
    normal_int,
    one_of,
    uniform_int,
)

__all__ = ["Template", "WorldData", "WorldFile", "load_world_data"]

_Words = tuple[str, ...]
_Lookup = Callable[[str], _Words]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Distribution(_Spec):
    """A draw whose fields other than ``kind`` are the keyword arguments of ``factory``."""

    factory: ClassVar[Callable[..., Draw]]

    def compile(self, words: _Lookup) -> Draw:
        """The distribution as a draw function (``words`` is unused: no lists)."""
        fields = type(self).model_fields
        return type(self).factory(
            **{name: getattr(self, name) for name in fields if name != "kind"}
        )


class UniformIntDraw(_Distribution):
    """Integers uniform on ``[low, high]``."""

    factory = staticmethod(uniform_int)
    kind: Literal["uniform_int"]
    low: int
    high: int


class NormalIntDraw(_Distribution):
    """Rounded normal integers clipped to ``[low, high]``."""

    factory = staticmethod(normal_int)
    kind: Literal["normal_int"]
    mean: float
    sd: float
    low: int
    high: int


class LognormalIntDraw(_Distribution):
    """Right-skewed integers: ``median``, log-scale ``sigma``, bounds, multiples of ``step``."""

    factory = staticmethod(lognormal_int)
    kind: Literal["lognormal_int"]
    median: float
    sigma: float
    low: int = 1
    high: int | None = None
    step: int = 1


class LognormalFloatDraw(_Distribution):
    """Right-skewed floats rounded to ``digits``."""

    factory = staticmethod(lognormal_float)
    kind: Literal["lognormal_float"]
    median: float
    sigma: float
    digits: int = 2


class NormalFloatDraw(_Distribution):
    """Normal floats clipped to ``[low, high]``, rounded to ``digits``."""

    factory = staticmethod(normal_float)
    kind: Literal["normal_float"]
    mean: float
    sd: float
    low: float
    high: float
    digits: int = 2


class BetaFloatDraw(_Distribution):
    """Beta(``alpha``, ``beta``) floats rescaled to ``[low, high]``, rounded to ``digits``."""

    factory = staticmethod(beta_float)
    kind: Literal["beta_float"]
    alpha: float
    beta: float
    low: float = 0.0
    high: float = 1.0
    digits: int = 2


class OneOfDraw(_Spec):
    """A categorical value: ``options`` (a list, or the name of a vocabulary list), ``weights``."""

    kind: Literal["one_of"]
    options: list[str] | str
    weights: list[float] | None = None

    def compile(self, words: _Lookup) -> Draw:
        """The distribution as a draw function.

        Raises:
            DatasetError: an unknown list, or as many weights as options.
        """
        options = words(self.options) if isinstance(self.options, str) else tuple(self.options)
        if self.weights is not None and len(self.weights) != len(options):
            raise DatasetError(f"one_of has {len(options)} options but {len(self.weights)} weights")
        return one_of(options, self.weights)


class ChanceDraw(_Distribution):
    """``True`` with ``probability``."""

    factory = staticmethod(chance)
    kind: Literal["chance"]
    probability: float = Field(ge=0, le=1)


class DateBetweenDraw(_Distribution):
    """Dates uniform on ``[start, end]``."""

    factory = staticmethod(date_between)
    kind: Literal["date_between"]
    start: dt.date
    end: dt.date


class TextDraw(_Spec):
    """A text template (see the module docstring) without parameters."""

    kind: Literal["text"]
    template: str

    def compile(self, words: _Lookup) -> Draw:
        """The template as a draw function.

        Raises:
            DatasetError: a bad placeholder, or a parameter (a text draw has none).
        """
        compiled = Template.parse(self.template, words)
        if compiled.parameters:
            raise DatasetError(
                f"template {self.template!r} needs parameters {sorted(compiled.parameters)}; "
                "only the generator can supply them (put it under templates:)"
            )
        return compiled.bind()


DrawSpec = Annotated[
    UniformIntDraw
    | NormalIntDraw
    | LognormalIntDraw
    | LognormalFloatDraw
    | NormalFloatDraw
    | BetaFloatDraw
    | OneOfDraw
    | ChanceDraw
    | DateBetweenDraw
    | TextDraw,
    Field(discriminator="kind"),
]


class PropertyEntry(_Spec):
    """One property: its type, its default draw (none: the generator supplies it), gaps.

    Attributes:
        type: ``STRING``, ``INTEGER``, ``FLOAT``, ``BOOLEAN`` or ``DATE``.
        draw: the default value distribution, or ``None``.
        missing: probability that a record lacks the property.
        optional: the generator itself may leave the property out.
    """

    type: PropertyType
    draw: DrawSpec | None = None
    missing: float = Field(default=0.0, ge=0, le=1)
    optional: bool = False

    @model_validator(mode="before")
    @classmethod
    def _bare_type(cls, value: Any) -> Any:
        return {"type": value} if isinstance(value, str) else value


class LabelEntry(_Spec):
    """One label: node count at scale 1, the fewest at any scale, identifying key, properties."""

    count: int = Field(ge=0)
    minimum: int = Field(default=1, ge=0)
    key: str | None = "name"
    extends: str | None = None
    properties: dict[str, PropertyEntry]


class WorldFile(_Spec):
    """A world data file as written (see the module docstring for the sections)."""

    info: WorldInfo
    vocabulary: dict[str, list[str] | dict[str, list[str]]] = Field(default_factory=dict)
    templates: dict[str, str] = Field(default_factory=dict)
    labels: dict[str, LabelEntry]
    relationships: dict[str, dict[str, PropertyEntry]] = Field(default_factory=dict)


_PATTERN = re.compile(r"\((\w+)\)-\[:(\w+)\]->\((\w+)\)")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_FIELD = re.compile(r"(\w+)(?::([\w:]+))?(?:\|(lower))?")
_Part = str | Callable[[random.Random, Mapping[str, str]], str]


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed text template: literal parts and draws, evaluated left to right.

    Attributes:
        text: the template as written.
        parts: literal strings and ``(rng, params) -> str`` draws, in order.
        parameters: the bare ``{name}`` placeholders the caller must supply.
    """

    text: str
    parts: tuple[_Part, ...]
    parameters: frozenset[str]

    @classmethod
    def parse(cls, text: str, words: _Lookup) -> Template:
        """Parse ``text``, resolving every style and list.

        Raises:
            DatasetError: an unknown placeholder kind, style or list, or a stray brace.
        """
        parts: list[_Part] = []
        parameters: set[str] = set()
        position = 0
        for match in _PLACEHOLDER.finditer(text):
            parts.append(_literal(text, text[position : match.start()]))
            parts.append(_placeholder(text, match.group(1), words, parameters))
            position = match.end()
        parts.append(_literal(text, text[position:]))
        return cls(text, tuple(p for p in parts if p != ""), frozenset(parameters))

    def render(self, rng: random.Random, params: Mapping[str, str]) -> str:
        """Draw one text from ``rng`` with the generator's ``params``."""
        return "".join(part if isinstance(part, str) else part(rng, params) for part in self.parts)

    def bind(self, **params: str) -> Draw:
        """A draw function of this template with ``params`` filled in.

        Raises:
            DatasetError: a parameter the template needs is not given.
        """
        missing = self.parameters - set(params)
        if missing:
            raise DatasetError(f"template {self.text!r} needs {sorted(missing)}")
        return lambda rng: self.render(rng, params)


def _literal(text: str, literal: str) -> str:
    if "{" in literal or "}" in literal:
        raise DatasetError(f"template {text!r} has an unmatched brace")
    return literal


def _placeholder(text: str, body: str, words: _Lookup, parameters: set[str]) -> _Part:
    match = _FIELD.fullmatch(body)
    if match is None:
        raise DatasetError(f"template {text!r}: bad placeholder {{{body}}}")
    kind, arg, lower = match.groups()
    draw: Callable[[random.Random, Mapping[str, str]], str]
    if arg is None:
        parameters.add(kind)
        draw = functools.partial(_parameter, kind)
    elif kind in ("word", "person"):
        if arg not in _names.STYLES and not (kind == "person" and arg in _names.PERSON_STYLES):
            raise DatasetError(f"template {text!r}: unknown name style {arg!r}")
        make = _names.word if kind == "word" else _names.person
        draw = functools.partial(_styled, make, arg)
    elif kind == "pick":
        draw = functools.partial(_picked, words(arg))
    elif kind in ("int", "roman"):
        low, _, high = arg.partition(":")
        if not (low.isdigit() and high.isdigit()):
            raise DatasetError(f"template {text!r}: {{{body}}} needs LOW:HIGH")
        draw = functools.partial(_number, int(low), int(high), kind == "roman")
    else:
        raise DatasetError(f"template {text!r}: unknown placeholder kind {kind!r}")
    return functools.partial(_lowered, draw) if lower else draw


def _parameter(name: str, rng: random.Random, params: Mapping[str, str]) -> str:
    return params[name]


def _styled(
    make: Callable[[random.Random, str], str],
    style: str,
    rng: random.Random,
    params: Mapping[str, str],
) -> str:
    return make(rng, style)


def _picked(options: _Words, rng: random.Random, params: Mapping[str, str]) -> str:
    return _names.pick(rng, options)


def _number(low: int, high: int, roman: bool, rng: random.Random, params: Mapping[str, str]) -> str:
    value = rng.randint(low, high)
    return _names.roman(value) if roman else str(value)


def _lowered(
    draw: Callable[[random.Random, Mapping[str, str]], str],
    rng: random.Random,
    params: Mapping[str, str],
) -> str:
    return draw(rng, params).lower()


@dataclass(frozen=True)
class WorldData:
    """A loaded world data file: the declaration and the vocabulary its generator reads.

    Attributes:
        spec: the world's declaration (labels, patterns, draws compiled).
        vocabulary: word lists and groups of lists, in file order.
        templates: the ``templates:`` section, parsed.
        source: where the file was read from (for messages).
    """

    spec: WorldSpec
    vocabulary: Mapping[str, _Words | Mapping[str, _Words]]
    templates: Mapping[str, Template]
    source: str

    def words(self, name: str) -> _Words:
        """The vocabulary list ``name``.

        Raises:
            DatasetError: no list of that name.
        """
        value = self.vocabulary.get(name)
        if not isinstance(value, tuple):
            raise DatasetError(f"{self.source}: no vocabulary list {name!r}")
        return value

    def groups(self, name: str) -> Mapping[str, _Words]:
        """The vocabulary group ``name`` (group -> list), in file order.

        Raises:
            DatasetError: no group of that name.
        """
        value = self.vocabulary.get(name)
        if value is None or isinstance(value, tuple):
            raise DatasetError(f"{self.source}: no vocabulary group {name!r}")
        return value

    def text(self, name: str, **params: str) -> Draw:
        """A draw function of template ``name`` with the generator's ``params`` filled in.

        Raises:
            DatasetError: no such template, or a parameter it needs is missing.
        """
        template = self.templates.get(name)
        if template is None:
            raise DatasetError(f"{self.source}: no template {name!r}")
        return template.bind(**params)


def load_world_data(source: str | Path) -> WorldData:
    """Load and check a world data file.

    Args:
        source: a world name (the file ``cypherturn/worlds/data/<name>.yaml``) or
            the path of a YAML file.

    Returns:
        The declaration and vocabulary; package files are read once per process.

    Raises:
        DatasetError: the file is missing, not YAML, does not match :class:`WorldFile`,
            or refers to an undeclared label, list, style or property.
    """
    if isinstance(source, Path):
        return _load(source.read_text(encoding="utf-8") if source.is_file() else None, str(source))
    return _packaged(source)


@functools.cache
def _packaged(name: str) -> WorldData:
    resource = resources.files("cypherturn.worlds").joinpath("data", f"{name}.yaml")
    text = resource.read_text(encoding="utf-8") if resource.is_file() else None
    return _load(text, f"world data {name}.yaml")


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(text: str | None, where: str) -> WorldData:
    if text is None:
        raise DatasetError(f"{where}: no such file")
    try:
        raw = yaml.load(text, Loader=_LOADER)
        parsed = WorldFile.model_validate(raw)
    except (yaml.YAMLError, ValidationError) as e:
        raise DatasetError(f"{where} is malformed: {e}") from e
    try:
        return _compile(parsed, where)
    except DatasetError as e:
        raise DatasetError(f"{where}: {e}") from e


def _compile(parsed: WorldFile, where: str) -> WorldData:
    vocabulary: dict[str, _Words | Mapping[str, _Words]] = {
        name: tuple(value) if isinstance(value, list) else {g: tuple(w) for g, w in value.items()}
        for name, value in parsed.vocabulary.items()
    }
    shadowed = sorted(set(vocabulary) & set(_names.LISTS))
    if shadowed:
        raise DatasetError(f"vocabulary {shadowed} shadows the shared lists of names.yaml")

    def words(name: str) -> _Words:
        value = vocabulary.get(name, _names.LISTS.get(name))
        if not isinstance(value, tuple):
            raise DatasetError(f"no vocabulary list {name!r}")
        return value

    def props(owner: str, entries: Mapping[str, PropertyEntry]) -> tuple[Prop, ...]:
        try:
            return tuple(
                Prop(
                    name,
                    entry.type,
                    None if entry.draw is None else entry.draw.compile(words),
                    entry.missing,
                    entry.optional,
                )
                for name, entry in entries.items()
            )
        except DatasetError as e:
            raise DatasetError(f"{owner}: {e}") from e

    labels = tuple(
        LabelDecl(label, e.count, props(label, e.properties), e.key, e.minimum, e.extends)
        for label, e in parsed.labels.items()
    )
    declared = {decl.label for decl in labels}
    for decl in labels:
        if decl.key is not None and decl.key not in {p.name for p in decl.properties}:
            raise DatasetError(f"{decl.label}: key {decl.key!r} is not one of its properties")
        if decl.extends is not None and decl.extends not in declared:
            raise DatasetError(f"{decl.label} extends undeclared label {decl.extends!r}")
    relationships = []
    for pattern, entries in parsed.relationships.items():
        match = _PATTERN.fullmatch(pattern.strip())
        if match is None:
            raise DatasetError(f"relationship {pattern!r} is not (Source)-[:TYPE]->(Target)")
        source, rel_type, target = match.groups()
        for label in (source, target):
            if label not in declared:
                raise DatasetError(f"relationship {pattern!r}: undeclared label {label!r}")
        relationships.append(RelDecl(rel_type, source, target, props(pattern, entries)))
    templates = {name: Template.parse(text, words) for name, text in parsed.templates.items()}
    return WorldData(
        spec=WorldSpec(info=parsed.info, labels=labels, relationships=tuple(relationships)),
        vocabulary=vocabulary,
        templates=templates,
        source=where,
    )
