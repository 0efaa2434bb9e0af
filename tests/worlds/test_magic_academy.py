"""Magic Academy: bipartite people/units structure and the two ambiguous Student-Professor paths."""

from __future__ import annotations

from world_graphs import Indexed, built

PEOPLE = {"Student", "Professor"}
UNITS = {"House", "Course"}


def professors_via_house(g: Indexed, student: int) -> set[int]:
    return {
        p
        for house in g.out["BELONGS_TO_HOUSE"][student]
        for kind in ("HEADS_HOUSE", "FELLOW_OF")
        for p in g.into[kind][house]
    }


def professors_via_courses(g: Indexed, student: int) -> set[int]:
    return {p for course in g.out["ENROLLED_IN"][student] for p in g.into["TEACHES"][course]}


def test_two_student_professor_paths_give_different_answers() -> None:
    g = Indexed(built("magic_academy"))
    students = g.keys("Student")
    assert all(professors_via_house(g, s) and professors_via_courses(g, s) for s in students)
    differing = [s for s in students if professors_via_house(g, s) != professors_via_courses(g, s)]
    closing = [s for s in students if professors_via_house(g, s) & professors_via_courses(g, s)]
    assert len(differing) > len(students) // 2  # ambiguous on purpose
    assert closing  # and the bipartite cycle Student-House-Professor-Course-Student closes


def test_people_meet_only_through_units() -> None:
    data = built("magic_academy")
    g = Indexed(data)
    for rel in data.relationships:
        ends = {g.label[rel.start], g.label[rel.end]}
        assert not ends <= PEOPLE and not ends <= UNITS


def test_each_house_has_one_head_and_each_student_one_house() -> None:
    g = Indexed(built("magic_academy"))
    assert all(len(g.into["HEADS_HOUSE"][h]) == 1 for h in g.keys("House"))
    assert all(len(g.out["BELONGS_TO_HOUSE"][s]) == 1 for s in g.keys("Student"))


def test_grades_follow_scores() -> None:
    data = built("magic_academy")
    for rel in data.relationships:
        if rel.type == "ENROLLED_IN":
            score, grade = rel.properties["score"], rel.properties["grade"]
            assert (grade == "A") == (score >= 85)
            assert (grade == "F") == (score < 40)
