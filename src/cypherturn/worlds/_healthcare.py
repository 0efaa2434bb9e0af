"""The Healthcare analytics graph of FDA FAERS adverse-event reports (RAS paper §4.1 Table 2).

Source: neo4j-graph-examples/healthcare-analytics, Data Importer package
``healthcare-analytics-data-importer.zip`` (commit 725a052), shipped under
``cypherturn/data/datasets/healthcare`` with its SOURCE.md. Counts and schema
are those of SOURCE.md: 11,381 nodes and 61,453 relationships.

Typing choices: the node CSVs annotate their non-string columns
(``primaryid:long``, ``age:double``, ``eventDate:date``), which are read as
INTEGER, FLOAT and DATE. The relationship CSVs annotate nothing; following the
importer model they are typed here as

* ``drugSequence``, ``startYear``, ``endYear``: INTEGER (the importer model's
  boolean for ``IS_PRIMARY_SUSPECT.drugSequence`` is an inference quirk; the
  values are 1, 2, ...);
* ``doseAmount``: FLOAT where numeric. Seven cells of the four Case-Drug files
  hold a substance name or a route (columns shifted in the FAERS source); they
  are left out, so the property is absent on those relationships rather than
  holding a string in a numeric property;
* ``route``, ``doseUnit``, ``indication``: STRING.

The original LOAD CSV script stored the relationship properties as strings.
"""

from __future__ import annotations

from typing import ClassVar

from cypherturn.worlds._admin_csv import DATE, FLOAT, INTEGER, STRING, ValueType, lenient
from cypherturn.worlds._base import WorldInfo
from cypherturn.worlds._importer import ImporterDataset, LabelSpec, RelationshipSpec

__all__ = ["HealthcareDataset"]

_DOSAGE: dict[str, ValueType] = {
    "drugSequence": INTEGER,
    "route": STRING,
    "doseAmount": lenient(FLOAT),
    "doseUnit": STRING,
    "indication": STRING,
}


class HealthcareDataset(ImporterDataset):
    """FDA FAERS 2021Q3 adverse-event cases: cases, drugs, reactions, outcomes, manufacturers.

    ``build(path=None)`` reads the packaged zip; ``path`` may be that zip, a
    folder of its extracted CSVs, or the dataset folder of the repository.
    See :class:`~cypherturn.worlds._importer.ImporterDataset` for errors raised.
    """

    INFO: ClassVar[WorldInfo] = WorldInfo(
        name="healthcare",
        title="Healthcare analytics (FDA FAERS)",
        kind="dataset",
        description=(
            "US adverse-event reports from the FDA Adverse Event Reporting System, 2021Q3. "
            "Each case (a patient report with age, gender and dates) is registered by a "
            "manufacturer, falls under an age group, is reported by a source, lists the drugs "
            "taken as primary suspect, secondary suspect, concomitant or interacting (with dose, "
            "route and indication on the relationship), the reactions observed, the outcomes, "
            "and the therapies received, which prescribe drugs with start and end years."
        ),
        source=(
            "neo4j-graph-examples/healthcare-analytics "
            "(https://github.com/neo4j-graph-examples/healthcare-analytics), commit "
            "725a052fb46a6e63bc55ad5aef403a9199d799ec, Data Importer package, by Chintan Desai "
            "(Neo4j); no licence declared. Data: US FDA FAERS 2021Q3, public domain. "
            "Cite the repository."
        ),
        expected_nodes=11_381,
        expected_relationships=61_453,
        topology=(
            "Heterogeneous biomedical entities around a Case hub; queries need multi-entity "
            "joins and attribute filtering on relationship properties, stressing schema "
            "alignment and type consistency (RAS §4.1): four Case-Drug relationship types, and "
            "drugs reached either directly or through Therapy."
        ),
    )
    PACKAGE_FOLDER: ClassVar[str] = "healthcare"
    ARCHIVE: ClassVar[str] = "healthcare-analytics-data-importer.zip"
    FILE_PREFIX: ClassVar[str] = "healthcare-analytics"
    LABELS: ClassVar[tuple[LabelSpec, ...]] = (
        LabelSpec(
            "Case",
            4_307,
            {
                "primaryid": INTEGER,
                "age": FLOAT,
                "ageUnit": STRING,
                "gender": STRING,
                "eventDate": DATE,
                "reportDate": DATE,
                "reporterOccupation": STRING,
            },
        ),
        LabelSpec("Drug", 2_500, {"name": STRING, "primarySubstabce": STRING}),
        LabelSpec("Reaction", 2_701, {"description": STRING}),
        LabelSpec("Therapy", 1_721, {"primaryid": INTEGER}),
        LabelSpec("Manufacturer", 136, {"manufacturerName": STRING}),
        LabelSpec("Outcome", 6, {"code": STRING, "outcome": STRING}),
        LabelSpec("ReportSource", 5, {"code": STRING, "name": STRING}),
        LabelSpec("AgeGroup", 5, {"ageGroup": STRING}),
    )
    RELATIONSHIPS: ClassVar[tuple[RelationshipSpec, ...]] = (
        RelationshipSpec("REGISTERED", {("Manufacturer", "Case"): 4_307}),
        RelationshipSpec("FALLS_UNDER", {("Case", "AgeGroup"): 4_307}),
        RelationshipSpec("HAS_REACTION", {("Case", "Reaction"): 21_069}),
        RelationshipSpec("RESULTED_IN", {("Case", "Outcome"): 4_461}),
        RelationshipSpec("REPORTED_BY", {("Case", "ReportSource"): 4_307}),
        RelationshipSpec("IS_PRIMARY_SUSPECT", {("Case", "Drug"): 3_830}, _DOSAGE),
        RelationshipSpec("IS_SECONDARY_SUSPECT", {("Case", "Drug"): 3_616}, _DOSAGE),
        RelationshipSpec("IS_CONCOMITANT", {("Case", "Drug"): 8_393}, _DOSAGE),
        RelationshipSpec("IS_INTERACTING", {("Case", "Drug"): 1}, _DOSAGE),
        RelationshipSpec("RECEIVED", {("Case", "Therapy"): 1_721}),
        RelationshipSpec(
            "PRESCRIBED",
            {("Therapy", "Drug"): 5_441},
            {"drugSequence": INTEGER, "startYear": INTEGER, "endYear": INTEGER},
        ),
    )
    INDEXES: ClassVar[tuple[tuple[str, str], ...]] = (
        ("Case", "primaryid"),
        ("Case", "age"),
        ("Case", "ageUnit"),
        ("Case", "gender"),
        ("Case", "eventDate"),
        ("Case", "reportDate"),
        ("Drug", "name"),
        ("Reaction", "description"),
        ("Therapy", "primaryid"),
        ("Manufacturer", "manufacturerName"),
        ("Outcome", "code"),
        ("ReportSource", "code"),
        ("AgeGroup", "ageGroup"),
    )
