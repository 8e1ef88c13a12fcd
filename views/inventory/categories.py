"""The category totals an inventory view's chart shows: the store's report, merged with the totals its changes bring."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from actions.domain import ReportRow, category_order
from actions.store import InventoryStore

__all__ = ["CategoryTotals"]


class CategoryTotals:
    """One warehouse's totals per category, in the order of the store's report. A change brings the totals of its own
    categories only, and changes of several workers may arrive out of order: each category shows the newest change of
    it, or the store's read when that is newer."""

    def __init__(self) -> None:
        self._rows: dict[str, ReportRow] = {}  # by category, in the report's order
        self._read_version = 0  # the store's version when the report was read
        self._versions: dict[str, int] = {}  # per category, the change its totals show when newer than the read

    @property
    def rows(self) -> tuple[ReportRow, ...]:
        return tuple(self._rows.values())

    def read(self, store: InventoryStore, warehouse: str) -> None:
        """Read the warehouse's category report from the store."""
        version = store.version()  # before reading: a change committed meanwhile is newer, and is merged
        self.reset(store.report("category", warehouse=warehouse), version)

    def reset(self, report: Sequence[ReportRow], version: int) -> None:
        """Show `report`, the store's category report as of `version` (read after it)."""
        self._rows = {row.group: row for row in report}
        self._read_version, self._versions = version, {}

    def merge(self, totals: Sequence[ReportRow], version: int) -> bool:
        """Take a change's totals (`version`: the change's) where they are newer; True when any figure changed."""
        changed = False
        for row in totals:
            if version <= self._versions.get(row.group, self._read_version):
                continue  # what the category shows is newer
            self._versions[row.group] = version
            if self._rows.get(row.group) == row:
                continue
            changed = True
            if row.group in self._rows:
                self._rows[row.group] = row
            else:  # a category the report did not have yet: placed where the report places it
                ordered = list(self._rows.values())
                bisect.insort(ordered, row, key=lambda each: category_order(each.group))
                self._rows = {each.group: each for each in ordered}
        return changed
