"""An agent that takes more than half of an item's stock asks the person first (apps.md §17), through the official
client: the person gives the reason to record, or declines and nothing changes; a client that cannot ask gets
today's behaviour; a declined call kept under its `_call_id` answers again without asking."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import mcp_types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext

from tests.support.e2e import RunningServer, mcp_client
from tests.views.inventory.support import OpenView, snapshot, texts

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the shared agent and tab live in the session loop

ERAS: list[Literal["auto", "legacy"]] = ["auto", "legacy"]  # 2026-07-28 (rounds), 2025-11-25 (asked in the call)
Answer = Literal["accept", "decline", "cancel"]


class Person:
    """The person at the client: answers every question with `answer` (and `reason`), records what was asked, and
    may do something while the question is open (`meanwhile`)."""

    def __init__(
        self, answer: Answer = "accept", reason: str = "", meanwhile: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.answer: Answer = answer
        self.reason = reason
        self.meanwhile = meanwhile
        self.asked: list[mcp_types.ElicitRequestFormParams] = []

    async def __call__(self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> Any:
        assert isinstance(params, mcp_types.ElicitRequestFormParams)
        self.asked.append(params)
        if self.meanwhile is not None:
            await self.meanwhile()
        if self.answer != "accept":
            return mcp_types.ElicitResult(action=self.answer)
        return mcp_types.ElicitResult(action="accept", content={"reason": self.reason})


def removable(db: Path, n: int, spare: int = 1) -> tuple[str, int]:
    """The `n`-th item of BER (by sku) of which at least `spare` units more than half of its on-hand units are
    available: (sku, on hand)."""
    stock = sorted(
        (sku, on_hand)
        for (warehouse, sku), (on_hand, reserved) in snapshot(db).stock.items()
        if warehouse == "BER" and on_hand >= 4 and on_hand - reserved >= on_hand // 2 + spare
    )
    return stock[n]


def last_movement(db: Path, sku: str) -> tuple[int, str, str]:
    """(delta, reason, actor) of the item's newest movement in BER."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        query = "SELECT delta, reason, actor FROM inventory_movements WHERE warehouse = 'BER' AND sku = ? "
        row = conn.execute(query + "ORDER BY id DESC LIMIT 1", (sku,)).fetchone()
    return (int(row[0]), str(row[1]), str(row[2]))


def declined(sku: str, on_hand: int, taken: int, answer: str = "decline") -> str:
    said = "declined" if answer == "decline" else "dismissed the question about"
    return (
        '<tool_error code="REMOVAL_DECLINED" severity="warning">\n'
        f"<message>The person {said} taking {taken} of the {on_hand} units of {sku} in warehouse BER. "
        "Nothing was changed.</message>\n"
        "<recovery>Tell the person the stock is unchanged. Book the removal again only if they ask for it "
        "(with a new _call_id if you send one): they will be asked again.</recovery>\n"
        "<details>\n"
        f'  <detail key="sku">{sku}</detail>\n'
        '  <detail key="warehouse">BER</detail>\n'
        f'  <detail key="on_hand">{on_hand}</detail>\n'
        f'  <detail key="requested">{taken}</detail>\n'
        f'  <detail key="answer">{answer}</detail>\n'
        "</details>\n"
        "</tool_error>"
    )


async def adjust(client: Client, view: OpenView, sku: str, delta: int, **extra: Any) -> mcp_types.CallToolResult:
    arguments = {"_view": view.handle, "sku": sku, "delta": delta, "reason": "Write-off"} | extra
    return await client.call_tool("inventory_adjust_stock", arguments)


@pytest.mark.parametrize("mode", ERAS)
async def test_the_person_approves_a_large_removal_with_the_reason_recorded(
    server: RunningServer, view: OpenView, agent: Client, db: Path, mode: Literal["auto", "legacy"]
) -> None:
    sku, on_hand = removable(db, ERAS.index(mode))
    taken = on_hand // 2 + 1
    before = snapshot(db)
    seen: list[Any] = []

    async def meanwhile() -> None:  # the question is open: nothing changed, and the view serves other calls
        seen.append(snapshot(db))
        async with asyncio.timeout(10):
            seen.append(await agent.call_tool("inventory_stock_report", {"_view": view.handle}))

    person = Person("accept", reason=f"Pallet damaged ({mode})", meanwhile=meanwhile)
    async with mcp_client(server, mode=mode, elicitation_callback=person) as client:
        result = await adjust(client, view, sku, -taken)
    assert not result.is_error, texts(result)
    assert snapshot(db).on_hand(sku) == on_hand - taken
    assert last_movement(db, sku) == (-taken, f"Pallet damaged ({mode})", "agent")  # the person's reason
    [question] = person.asked
    assert question.message.startswith(f"The agent wants to take {taken} of the {on_hand} units of {sku} (")
    assert "'Write-off'" in question.message  # the agent's reason, for the person to judge
    assert question.requested_schema["required"] == ["reason"]
    assert seen[0] == before and not seen[1].is_error, seen
    assert not (await adjust(agent, view, sku, taken, reason="Restocked after the test")).is_error


@pytest.mark.parametrize(("mode", "answer"), [("legacy", "decline"), ("legacy", "cancel"), ("auto", "decline")])
async def test_a_declined_removal_changes_nothing_and_says_so(
    server: RunningServer, view: OpenView, db: Path, mode: Literal["auto", "legacy"], answer: Answer
) -> None:
    sku, on_hand = removable(db, 2)
    taken = on_hand // 2 + 1
    before = snapshot(db)
    person = Person(answer)
    async with mcp_client(server, mode=mode, elicitation_callback=person) as client:
        result = await adjust(client, view, sku, -taken)
    assert not result.is_error  # a warning: the person answered, nothing failed
    assert texts(result) == [declined(sku, on_hand, taken, answer)]
    assert snapshot(db) == before
    assert len(person.asked) == 1


async def test_a_small_removal_or_an_addition_does_not_ask(server: RunningServer, view: OpenView, db: Path) -> None:
    sku, on_hand = removable(db, 3)
    person = Person("decline")
    async with mcp_client(server, mode="legacy", elicitation_callback=person) as client:
        taken = await adjust(client, view, sku, -(on_hand // 2))  # exactly half at most: no question
        added = await adjust(client, view, sku, on_hand // 2)
    assert not taken.is_error and not added.is_error, (texts(taken), texts(added))
    assert snapshot(db).on_hand(sku) == on_hand and person.asked == []


async def test_a_client_that_cannot_ask_removes_as_before(view: OpenView, agent: Client, db: Path) -> None:
    sku, on_hand = removable(db, 4)
    taken = on_hand // 2 + 1
    result = await adjust(agent, view, sku, -taken)  # the shared agent declares no elicitation
    assert not result.is_error, texts(result)
    assert snapshot(db).on_hand(sku) == on_hand - taken
    assert last_movement(db, sku) == (-taken, "Write-off", "agent")
    assert not (await adjust(agent, view, sku, taken, reason="Restocked after the test")).is_error


async def test_a_declined_call_id_answers_the_decline_again_without_asking(
    server: RunningServer, view: OpenView, db: Path
) -> None:
    sku, on_hand = removable(db, 5)
    taken = on_hand // 2 + 1
    before = snapshot(db)
    person = Person("decline")
    async with mcp_client(server, mode="legacy", elicitation_callback=person) as client:
        first = await adjust(client, view, sku, -taken, _call_id="removal-1")
        person.answer, person.reason = "accept", "Changed my mind"  # a retry does not ask: no answer is heard
        again = await adjust(client, view, sku, -taken, _call_id="removal-1")
        assert len(person.asked) == 1 and snapshot(db) == before
        assert texts(first) == texts(again) == [declined(sku, on_hand, taken)]
        renewed = await adjust(client, view, sku, -taken, _call_id="removal-2")  # a new call asks again
    assert not renewed.is_error, texts(renewed)
    assert len(person.asked) == 2
    assert last_movement(db, sku) == (-taken, "Changed my mind", "agent")
    assert snapshot(db).on_hand(sku) == on_hand - taken


async def test_a_stock_changed_while_the_person_is_asked_asks_again_with_the_new_figures(
    server: RunningServer, view: OpenView, agent: Client, db: Path
) -> None:
    sku, on_hand = removable(db, 6, spare=2)
    taken = on_hand // 2 + 2  # still more than half of one more unit

    async def delivery() -> None:  # a delivery meanwhile, on the first question only
        if len(person.asked) == 1:
            assert not (await adjust(agent, view, sku, 1, reason="Delivery meanwhile")).is_error

    person = Person("accept", reason="Sold to a walk-in customer", meanwhile=delivery)
    async with mcp_client(server, mode="legacy", elicitation_callback=person) as client:
        result = await adjust(client, view, sku, -taken)
    assert not result.is_error, texts(result)
    first, second = person.asked
    assert f"of the {on_hand} units" in first.message and f"of the {on_hand + 1} units" in second.message
    assert snapshot(db).on_hand(sku) == on_hand + 1 - taken
    assert last_movement(db, sku) == (-taken, "Sold to a walk-in customer", "agent")
