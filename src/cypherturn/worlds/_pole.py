"""The POLE crime-investigation graph (the RAS paper's "Crime" dataset, §4.1 Table 2).

Source: neo4j-graph-examples/pole, Data Importer package ``pole-data-importer.zip``
(commit 179b33c), shipped under ``cypherturn/data/datasets/pole`` with its
SOURCE.md. Counts and schema are those of SOURCE.md: 61,521 nodes and 105,840
relationships.

Typing choices (the CSV headers annotate only ``latitude``/``longitude``):

* ``Vehicle.year`` and ``PhoneCall.call_duration`` are INTEGER, as the importer
  model types them;
* ``Crime.date`` and ``PhoneCall.call_date`` are written ``dd/mm/yyyy`` and
  stored as DATE (``datetime.date``), so date comparisons and ``.month`` work;
  the importer model leaves them strings;
* ``Person.age`` is INTEGER (one person of 369 has an age); the importer model
  says string;
* every other column is a STRING, ``:ID`` values are not stored (as with
  neo4j-admin), and property keys are the CSV's own (``Crime.id`` is the
  police.uk crime identifier, not the importer's ``:ID``).
"""

from __future__ import annotations

from typing import ClassVar

from cypherturn.worlds._admin_csv import DATE_DMY, FLOAT, INTEGER, STRING
from cypherturn.worlds._base import WorldInfo
from cypherturn.worlds._importer import ImporterDataset, LabelSpec, RelationshipSpec

__all__ = ["PoleDataset"]

_KNOWS = ("Person", "Person")


class PoleDataset(ImporterDataset):
    """POLE (Person, Object, Location, Event) crime investigation graph, Greater Manchester 2017.

    ``build(path=None)`` reads the packaged zip; ``path`` may be that zip, a
    folder of its extracted CSVs, or the dataset folder of the repository.
    See :class:`~cypherturn.worlds._importer.ImporterDataset` for errors raised.
    """

    INFO: ClassVar[WorldInfo] = WorldInfo(
        name="pole",
        title="POLE crime investigation",
        kind="dataset",
        description=(
            "Street-level crimes recorded in Greater Manchester in August 2017, modelled in the "
            "POLE pattern used in law-enforcement analytics: Person, Object, Location, Event. "
            "Crimes occur at locations that roll up to postcodes and areas, are investigated by "
            "officers and involve vehicles and objects; a small social network of persons knows, "
            "phones, e-mails and lives near one another and is party to some crimes. Persons, "
            "officers, vehicles and phone records are fictitious."
        ),
        source=(
            "neo4j-graph-examples/pole (https://github.com/neo4j-graph-examples/pole), commit "
            "179b33ceb4884aa02aba932cd5efc06648a7d0fd, Data Importer package, by Joe Depeau "
            "(Neo4j); no licence declared. Crime data: data.police.uk, Open Government Licence "
            "v3.0. Cite the repository."
        ),
        expected_nodes=61_521,
        expected_relationships=105_840,
        topology=(
            "Moderate scale with complex relationship directionality and path constraints "
            "(RAS §4.1): many relationship types between the same labels (KNOWS, KNOWS_SN, "
            "KNOWS_PHONE, KNOWS_LW, FAMILY_REL), CALLER/CALLED pairs, and a location hierarchy "
            "reached by two routes (LOCATION_IN_AREA vs HAS_POSTCODE/POSTCODE_IN_AREA)."
        ),
    )
    PACKAGE_FOLDER: ClassVar[str] = "pole"
    ARCHIVE: ClassVar[str] = "pole-data-importer.zip"
    FILE_PREFIX: ClassVar[str] = "crime-investigation"
    LABELS: ClassVar[tuple[LabelSpec, ...]] = (
        LabelSpec(
            "Crime",
            28_762,
            {
                "id": STRING,
                "date": DATE_DMY,
                "type": STRING,
                "last_outcome": STRING,
                "note": STRING,
                "charge": STRING,
            },
        ),
        LabelSpec(
            "Location",
            14_904,
            {"address": STRING, "postcode": STRING, "latitude": FLOAT, "longitude": FLOAT},
        ),
        LabelSpec("PostCode", 14_196, {"code": STRING}),
        LabelSpec("Area", 93, {"areaCode": STRING}),
        LabelSpec(
            "Officer",
            1_000,
            {"badge_no": STRING, "rank": STRING, "name": STRING, "surname": STRING},
        ),
        LabelSpec(
            "Vehicle",
            1_000,
            {"make": STRING, "model": STRING, "reg": STRING, "year": INTEGER},
        ),
        LabelSpec(
            "PhoneCall",
            534,
            {
                "call_date": DATE_DMY,
                "call_time": STRING,
                "call_duration": INTEGER,
                "call_type": STRING,
            },
        ),
        LabelSpec(
            "Person",
            369,
            {"name": STRING, "surname": STRING, "nhs_no": STRING, "age": INTEGER},
        ),
        LabelSpec("Phone", 328, {"phoneNo": STRING}),
        LabelSpec("Email", 328, {"email_address": STRING}),
        LabelSpec("Object", 7, {"id": STRING, "description": STRING, "type": STRING}),
    )
    RELATIONSHIPS: ClassVar[tuple[RelationshipSpec, ...]] = (
        RelationshipSpec("OCCURRED_AT", {("Crime", "Location"): 28_762}),
        RelationshipSpec("INVESTIGATED_BY", {("Crime", "Officer"): 28_762}),
        RelationshipSpec("HAS_POSTCODE", {("Location", "PostCode"): 14_904}),
        RelationshipSpec("LOCATION_IN_AREA", {("Location", "Area"): 14_904}),
        RelationshipSpec("POSTCODE_IN_AREA", {("PostCode", "Area"): 14_196}),
        RelationshipSpec("INVOLVED_IN", {("Vehicle", "Crime"): 978, ("Object", "Crime"): 7}),
        RelationshipSpec("CALLER", {("PhoneCall", "Phone"): 534}),
        RelationshipSpec("CALLED", {("PhoneCall", "Phone"): 534}),
        RelationshipSpec("KNOWS", {_KNOWS: 586}),
        RelationshipSpec("KNOWS_SN", {_KNOWS: 241}),
        RelationshipSpec("KNOWS_PHONE", {_KNOWS: 118}),
        RelationshipSpec("KNOWS_LW", {_KNOWS: 80}),
        RelationshipSpec("FAMILY_REL", {_KNOWS: 155}, {"rel_type": STRING}),
        RelationshipSpec("CURRENT_ADDRESS", {("Person", "Location"): 368}),
        RelationshipSpec("HAS_PHONE", {("Person", "Phone"): 328}),
        RelationshipSpec("HAS_EMAIL", {("Person", "Email"): 328}),
        RelationshipSpec("PARTY_TO", {("Person", "Crime"): 55}),
    )
    INDEXES: ClassVar[tuple[tuple[str, str], ...]] = (
        ("Crime", "id"),
        ("Crime", "type"),
        ("Crime", "last_outcome"),
        ("Location", "address"),
        ("Location", "postcode"),
        ("PostCode", "code"),
        ("Area", "areaCode"),
        ("Officer", "badge_no"),
        ("Officer", "surname"),
        ("Vehicle", "reg"),
        ("Person", "nhs_no"),
        ("Person", "name"),
        ("Person", "surname"),
        ("Phone", "phoneNo"),
        ("Email", "email_address"),
        ("Object", "id"),
    )
