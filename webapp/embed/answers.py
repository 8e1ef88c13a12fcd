"""A tunnel's answers: each has an id; one too long for a tool result is cut in parts, and the newest few long ones
are kept until each of their parts was fetched, so one answer never replaces another's parts (a POST's a held GET's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["KEPT", "Answer", "Answers", "split_parts"]

KEPT = 4
"""Long answers a tunnel keeps the parts of (the newest ones)."""
_PART_SLACK = 512  # characters of a result around a part's text


@dataclass(frozen=True, slots=True)
class Answer:
    """What a tunnel request answers: an HTTP status and the body's first part (with the number of parts and the
    answer's `id`, which its other parts are fetched by), or a held GET still waiting (`pending`)."""

    status: int
    body: str = ""
    parts: int = 1
    pending: bool = False
    id: int = 0


def split_parts(text: str, limit: int) -> tuple[str, ...]:
    """`text` cut so that each part, serialized as a JSON string inside a result, stays within `limit` characters."""
    budget = max(limit - _PART_SLACK, 1024)
    parts: list[str] = []
    start = 0
    while start < len(text) or not parts:
        size = min(budget, len(text) - start)
        while size > 1 and len(json.dumps(text[start : start + size])) > budget:
            size = size * budget // len(json.dumps(text[start : start + size])) - 1
        parts.append(text[start : start + max(size, 1)])
        start += max(size, 1)
    return tuple(parts)


@dataclass(eq=False, slots=True)
class _Long:
    texts: tuple[str, ...]
    missing: set[int]  # the parts not fetched yet (part 0 came with the answer)


class Answers:
    """The answers of one tunnel: `add` numbers an answer and keeps its parts, `part` hands them out."""

    def __init__(self) -> None:
        self.newest = 0
        """The id of the newest answer."""
        self._long: dict[int, _Long] = {}  # by id, oldest first

    def __len__(self) -> int:
        """How many long answers are kept."""
        return len(self._long)

    def add(self, status: int, body: str, chunk: int) -> Answer:
        """The answer's first part and its id; the other parts kept (a long answer beyond the `KEPT` newest is
        dropped)."""
        parts = split_parts(body, chunk)
        self.newest += 1
        answer = Answer(status, parts[0], len(parts), id=self.newest)
        if len(parts) > 1:
            self._long[self.newest] = _Long(parts, set(range(1, len(parts))))
            while len(self._long) > KEPT:
                del self._long[next(iter(self._long))]
        return answer

    def part(self, answer: int, index: int) -> Answer:
        """Part `index` of answer `answer`; a long answer is dropped once each of its parts was fetched. ValueError
        (saying the rule) when it is not kept or has no such part."""
        kept = self._long.get(answer)
        if kept is None:
            raise ValueError(
                f"Answer {answer!r} has no parts to fetch: it came whole, each of its parts was fetched, or {KEPT} "
                "newer long answers came since. Fetch an answer's parts as soon as it comes."
            )
        if not 0 < index < len(kept.texts):
            raise ValueError(
                f"Part {index!r} is out of place: answer {answer} has {len(kept.texts)} parts, and parts 1 to "
                f"{len(kept.texts) - 1} come this way (part 0 came with the answer)."
            )
        kept.missing.discard(index)
        if not kept.missing:
            del self._long[answer]
        return Answer(200, kept.texts[index], len(kept.texts), id=answer)

    def clear(self) -> None:
        self._long.clear()
