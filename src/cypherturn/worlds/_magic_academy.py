"""Magic Academy: a bipartite cycle with two Student-Professor paths (CypherTurn appendix D.1).

Topology. People (students, professors) connect only through units (houses,
courses): a student BELONGS_TO_HOUSE a house that a professor HEADS_HOUSE or is
a FELLOW_OF, and the same student is ENROLLED_IN courses that professors TEACH.
``(Student)->(House)<-(Professor)->(Course)<-(Student)`` closes a four-node
bipartite cycle, and "the professors of a student" is ambiguous on purpose:
through the house or through the courses give different answers. Courses also
STUDY creatures and REQUIRE spells.
"""

from __future__ import annotations

import datetime as dt
import functools
import random

from cypherturn.graph import GraphData
from cypherturn.worlds._names import pick
from cypherturn.worlds._synthetic import (
    GraphBuilder,
    SyntheticWorld,
    normal_int,
    spread,
)
from cypherturn.worlds._world_data import load_world_data

__all__ = ["MagicAcademy"]

# Declarations and vocabulary: data/magic_academy.yaml; the topology rules are the code below.
_DATA = load_world_data("magic_academy")
SPEC = _DATA.spec
_SUBJECTS = _DATA.words("subjects")
_LEVEL_PREFIX = _DATA.groups("level_prefix")

_LEVELS = ("Beginner", "Intermediate", "Advanced", "Master")
_CREDITS = {"Beginner": (2, 3), "Intermediate": (3, 4), "Advanced": (4, 5), "Master": (5, 6)}


def _course_name(level: str, subject: str, rng: random.Random) -> str:
    part = "" if rng.random() < 0.5 else " " + pick(rng, ("I", "II", "III"))
    return f"{pick(rng, _LEVEL_PREFIX[level])} {subject}{part}"


def _grade(score: float) -> str:
    for threshold, grade in ((85, "A"), (70, "B"), (55, "C"), (40, "D")):
        if score >= threshold:
            return grade
    return "F"


_TERM_START = dt.date(1326, 9, 1)


class MagicAcademy(SyntheticWorld):
    """The Magic Academy world; see the module docstring for its topology."""

    SPEC = SPEC

    def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
        """Build houses, professors and their courses, students and their enrolments."""
        b = self.builder(rng, source, scale)

        houses = [b.node("House") for _ in range(b.count("House"))]
        professors = []
        subjects = list(_SUBJECTS)
        rng.shuffle(subjects)
        for index in range(b.count("Professor")):
            subject = subjects[index % len(subjects)]
            professors.append(b.node("Professor", subject=subject))
        house_of: dict[int, int] = {}
        for index, (professor, house) in enumerate(
            zip(professors, spread(rng, houses, len(professors)), strict=True)
        ):
            since = b.get(professor, "tenure_year") or rng.randint(1290, 1325)
            head = index < len(houses)
            b.rel("HEADS_HOUSE" if head else "FELLOW_OF", professor, house, since_year=since)
            house_of[professor] = house

        courses, teachers = self._courses(b, rng, b.count("Course"), professors)
        self._students(b, rng, b.count("Student"), houses, courses, teachers, house_of)
        self._creatures_and_spells(b, rng, b.count("Creature"), b.count("Spell"), courses)
        return b.finish(SPEC.info.name)

    @staticmethod
    def _courses(
        b: GraphBuilder, rng: random.Random, n: int, professors: list[int]
    ) -> tuple[list[int], dict[int, list[int]]]:
        courses: list[int] = []
        teachers: dict[int, list[int]] = {}
        for professor in spread(rng, professors, n):
            level = _LEVELS[min(3, int(rng.triangular(0, 4, 1)))]
            subject = b.get(professor, "subject")
            name = b.fresh("Course", functools.partial(_course_name, level, subject))
            course = b.node("Course", name=name, level=level, credits=rng.randint(*_CREDITS[level]))
            b.rel("TEACHES", professor, course, weekly_hours=rng.randint(2, 6))
            teachers[course] = [professor]
            if rng.random() < 0.12:
                partner = professors[rng.randrange(len(professors))]
                if partner != professor:
                    b.rel("TEACHES", partner, course, weekly_hours=rng.randint(1, 2))
                    teachers[course].append(partner)
            courses.append(course)
        return courses, teachers

    @staticmethod
    def _students(
        b: GraphBuilder,
        rng: random.Random,
        n: int,
        houses: list[int],
        courses: list[int],
        teachers: dict[int, list[int]],
        house_of: dict[int, int],
    ) -> None:
        by_level: dict[str, list[int]] = {}
        for course in courses:
            by_level.setdefault(b.get(course, "level"), []).append(course)
        for index, house in enumerate(spread(rng, houses, n)):
            year = rng.randint(1, 7)
            enrolled = _TERM_START.replace(year=_TERM_START.year - year + 1)
            student = b.node("Student", year=year, enrolled_on=enrolled)
            b.rel(
                "BELONGS_TO_HOUSE",
                student,
                house,
                sorted_on=enrolled + dt.timedelta(days=rng.randint(0, 6)),
            )
            suited = [c for lv in _suited_levels(year) for c in by_level.get(lv, [])] or courses
            picks = rng.sample(suited, k=min(len(suited), rng.choice((2, 3, 3, 3, 4))))
            if index == 0:
                # Guarantee one closed cycle: a course taught by a professor of the student's house.
                own = [c for c in courses if any(house_of[p] == house for p in teachers[c])]
                if own and not set(picks) & set(own):
                    picks[0] = own[rng.randrange(len(own))]
            talent = b.get(student, "talent_score")
            for course in picks:
                score = round(min(100.0, max(0.0, rng.gauss(talent + 5, 12))), 1)
                b.rel(
                    "ENROLLED_IN",
                    student,
                    course,
                    grade=_grade(score),
                    score=score,
                    term=rng.randint(1, 3),
                )

    @staticmethod
    def _creatures_and_spells(
        b: GraphBuilder, rng: random.Random, n_creatures: int, n_spells: int, courses: list[int]
    ) -> None:
        lore = courses[: max(1, len(courses) * 2 // 5)]
        for course in spread(rng, lore, n_creatures):
            danger = normal_int(4.5, 2.2, 1, 10)(rng)
            creature = b.node(
                "Creature", danger_level=danger, is_tameable=danger <= 4 and rng.random() < 0.8
            )
            b.rel("STUDIES_CREATURE", course, creature)
            if rng.random() < 0.2:
                other = courses[rng.randrange(len(courses))]
                if other != course:
                    b.rel("STUDIES_CREATURE", other, creature)
        spells = [b.node("Spell") for _ in range(n_spells)]
        required = spread(rng, courses, max(round(len(courses) * 1.2), len(spells)))
        covered = spread(rng, spells, len(required))
        pairs = dict.fromkeys(zip(required, covered, strict=True))
        for course, spell in pairs:
            b.rel(
                "REQUIRES",
                course,
                spell,
                mastery_level=min(5, max(1, b.get(spell, "power_level") // 2)),
            )


def _suited_levels(year: int) -> tuple[str, ...]:
    if year <= 2:
        return ("Beginner", "Intermediate")
    if year <= 5:
        return ("Intermediate", "Advanced")
    return ("Advanced", "Master")
