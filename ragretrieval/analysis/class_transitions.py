"""Two runs' classes of the same questions compared: how many questions each class holds in each run, and where the
questions of each class in the first run went in another (a transition table). The classes themselves are decided
above (answers/failures.py, the failure classes); this module only counts, in the order it is given."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


def transitions(before: dict[str, str], after: dict[str, str]) -> dict[tuple[str, str], int]:
    """(class in A, class in B) -> questions, over the question ids both runs have."""
    return dict(Counter((before[q], after[q]) for q in before if q in after))


def transition_lines(label_a: str, label_b: str, moved: dict[tuple[str, str], int], order) -> list[str]:
    """The transition table: a row per class in A, a column per class in B (in `order`), counts; only classes that
    occur."""
    rows = [c for c in order if any(a == c for a, _ in moved)]
    columns = [c for c in order if any(b == c for _, b in moved)]
    corner = "A \\ B"
    width = max([len(c) for c in rows] + [len(corner)])
    lines = [f"failure classes, A = {label_a} (rows) -> B = {label_b} (columns); questions paired: "
             f"{sum(moved.values())}", f"{corner:<{width}}  " + "  ".join(columns)]
    for row in rows:
        lines.append(f"{row:<{width}}  " + "  ".join(f"{moved.get((row, c), 0):>{len(c)}}" for c in columns))
    changed = sum(n for (a, b), n in moved.items() if a != b)
    lines.append(f"{changed} question(s) changed class; the diagonal kept theirs")
    return lines


@dataclass(frozen=True)
class ClassComparison:
    """`compare`'s failure classes: each run's counts and, per run after the first, the transitions from the first."""

    labels: list[str]
    counts: dict[str, dict[str, int]]  # run label -> class -> questions
    moved: list[dict[tuple[str, str], int]]  # per run after the first: (class in the first, class in it) -> questions
    order: tuple[str, ...] = ()  # the classes in the order every table shows them

    def lines(self) -> list[str]:
        out = []
        for label, moved in zip(self.labels[1:], self.moved):
            out += ["", *transition_lines(self.labels[0], label, moved, self.order)]
        return out

    def to_json(self) -> dict:
        rank = {name: i for i, name in enumerate(self.order)}
        return {"counts": self.counts, "baseline": self.labels[0],
                "transitions": {label: [{"from": a, "to": b, "n": n} for (a, b), n in sorted(
                    moved.items(), key=lambda item: (rank[item[0][0]], rank[item[0][1]]))]
                                for label, moved in zip(self.labels[1:], self.moved)}}


def compare_labelled(classes: list[tuple[str, dict[str, str]]], order) -> ClassComparison:
    """Runs' classes (label, question id -> class), each run after the first paired with the first by id."""
    counts = {label: {c: n for c in order if (n := list(found.values()).count(c))} for label, found in classes}
    base = classes[0][1]
    return ClassComparison([label for label, _ in classes], counts,
                           [transitions(base, found) for _, found in classes[1:]], tuple(order))
