"""Two principals with bearer tokens, each with live views, try ≥1,000 times — interleaved and concurrently, over
`/mcp` in process — to reach the other's views: by the other's view id, by its attach key, by guessed and mutated
ids, by the other's MCP session id (tool calls, streams, DELETE), by adoption and by routing without an id. None of
it ever succeeds: each answer is the one for an unknown id or session, the other's views never change, and the
other's own calls keep working. The final counts equal what each principal did itself.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
import pytest_asyncio

from tests.support.fuzz_app import counter_app
from tests.support.fuzz_requests import (
    JSON_ACCEPT,
    LEGACY,
    call_in_session,
    call_sessionless,
    jsonrpc_result,
    open_session,
)
from tests.support.fuzz_server import InProcess, Tab, in_process_server
from webapp.bridge.registry import ViewRecord

TOKENS = {"alice": "alice-token-0c7e4b19f2d3", "bob": "bob-token-6a2d8f4e1c05"}
ROUNDS, ATTEMPTS_PER_ROUND = 84, 12  # 1,008 attempts, 12 at a time beside the victims' own calls
TOOLS = ["counter_increment", "counter_reset", "counter_double", "counter_update", "notes_append", "counter", "notes"]
ARGUMENTS: dict[str, dict[str, Any]] = {"counter_update": {"title": "stolen"}, "notes_append": {"line": "stolen"}}

pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Principal:
    name: str
    token: str
    session: str
    views: dict[str, ViewRecord] = field(default_factory=lambda: {})  # app -> its live view
    tabs: list[Tab] = field(default_factory=lambda: [])
    increments: int = 0

    @property
    def secrets(self) -> list[str]:
        return [secret for view in self.views.values() for secret in (view.handle, view.attach_key)] + [self.session]


@dataclass
class Arena:
    server: InProcess
    http: httpx2.AsyncClient
    alice: Principal
    bob: Principal
    person_tab: Tab


def result_of(response: httpx2.Response) -> dict[str, Any]:
    result = jsonrpc_result(response)
    assert result is not None, (response.status_code, response.text[:300])
    return result


def text(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def arena(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Arena]:
    options: dict[str, Any] = {
        "token": [f"{name}={token}" for name, token in TOKENS.items()],
        "wait_for_live": 0.05,
        "reconnect_grace": 0.05,
        "browser_confirm": False,
        "call_timeout": 5.0,
    }
    folder = tmp_path_factory.mktemp("isolation")
    async with in_process_server(folder, counter_app, **options) as server, server.http() as http:
        principals: list[Principal] = []
        for name, token in TOKENS.items():
            principal = Principal(name, token, await open_session(http, token))
            for app in ("counter", "notes"):
                opened = result_of(await call_in_session(http, token, principal.session, app, {}))
                tab = await server.open_tab(opened["structuredContent"]["url"])
                principal.views[app] = await server.attached(tab)
                principal.tabs.append(tab)
            principals.append(principal)
        person_tab = await server.open_tab("/counter")  # a view a person opened, bound to nobody
        await server.attached(person_tab)
        yield Arena(server, http, principals[0], principals[1], person_tab)
        for tab in [person_tab, *principals[0].tabs, *principals[1].tabs]:
            await tab.closed()


def snapshot(victim: Principal, *, plus: int = 0) -> str:
    """The victim's views' data (with `plus` added to its count: what its own increments did)."""
    data = {app: dict(view.data) for app, view in victim.views.items()}
    data["counter"]["count"] = int(data["counter"]["count"]) + plus
    return json.dumps(data, sort_keys=True)


class Attacks:
    """Every way one principal tries to reach the other's views; each returns a problem text, or None."""

    def __init__(self, arena: Arena, attacker: Principal, victim: Principal, rng: random.Random) -> None:
        self.arena, self.attacker, self.victim, self.rng = arena, attacker, victim, rng

    def kinds(self) -> dict[str, Callable[[], Awaitable[str | None]]]:
        return {
            "view id": self.by_view_id,
            "attach key": self.by_attach_key,
            "guessed id": self.by_guess,
            "mutated id": self.by_mutation,
            "session id: call": self.by_session_call,
            "session id: stream": self.by_session_stream,
            "session id: delete": self.by_session_delete,
            "adoption": self.by_adoption,
            "routing without id": self.by_routing,
        }

    async def call(self, tool: str, view_id: str | None) -> dict[str, Any]:
        arguments = dict(ARGUMENTS.get(tool, {})) | ({} if view_id is None else {"_view": view_id})
        http, token = self.arena.http, self.attacker.token
        if self.rng.random() < 0.5:
            return result_of(await call_in_session(http, token, self.attacker.session, tool, arguments))
        return result_of(await call_sessionless(http, token, tool, arguments))

    async def unknown(self, view_id: str) -> str | None:
        """A call naming `view_id` must answer exactly like a call naming an id that never existed."""
        tool = self.rng.choice(TOOLS)
        answer = text(await self.call(tool, view_id))
        baseline = text(await self.call(tool, "n" * len(view_id))).replace("n" * len(view_id), view_id)
        if "VIEW_UNKNOWN" not in answer or answer != baseline:
            return f"{tool} with a foreign id answered {answer[:160]!r}"
        return None

    async def by_view_id(self) -> str | None:
        return await self.unknown(self.rng.choice(list(self.victim.views.values())).handle)

    async def by_attach_key(self) -> str | None:
        return await self.unknown(self.rng.choice(list(self.victim.views.values())).attach_key)

    async def by_guess(self) -> str | None:
        return await self.unknown(secrets.token_urlsafe(16))

    async def by_mutation(self) -> str | None:
        handle = self.rng.choice(list(self.victim.views.values())).handle
        position = self.rng.randrange(len(handle))
        replacement = self.rng.choice([c for c in "AbZ09-_" if c != handle[position]])
        forms = [handle[:position] + replacement + handle[position + 1 :], handle.swapcase(), handle[:-2], handle + "="]
        return await self.unknown(self.rng.choice(forms))

    def session_headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.attacker.token}",
            "Accept": JSON_ACCEPT,
            "Content-Type": "application/json",
            "Mcp-Session-Id": self.victim.session,
            "MCP-Protocol-Version": LEGACY,
        }

    async def by_session_call(self) -> str | None:
        tool = self.rng.choice(TOOLS)
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": {}}}
        response = await self.arena.http.post("/mcp", json=body, headers=self.session_headers())
        return None if response.status_code == 404 else f"{tool} in the other's session got {response.status_code}"

    async def by_session_stream(self) -> str | None:
        headers = self.session_headers() | {"Accept": "text/event-stream"}
        try:
            async with asyncio.timeout(5):
                response = await self.arena.http.get("/mcp", headers=headers)
        except TimeoutError:
            return "the other's session stream was opened"
        return None if response.status_code == 404 else f"a stream in the other's session got {response.status_code}"

    async def by_session_delete(self) -> str | None:
        response = await self.arena.http.delete("/mcp", headers=self.session_headers())
        return None if response.status_code == 404 else f"deleting the other's session got {response.status_code}"

    async def by_adoption(self) -> str | None:
        result = await self.call(self.rng.choice(["counter", "notes"]), None)
        handle = (result.get("structuredContent") or {}).get("view")
        registry = self.arena.server.bridge.registry
        view = registry.by_handle(handle) if isinstance(handle, str) else None
        if view is None or view.principal != self.attacker.name:
            return f"opening without an id handed out {view!r} of {getattr(view, 'principal', None)!r}"
        self.attacker.views.setdefault(view.app, view)
        return None

    async def by_routing(self) -> str | None:
        tool = self.rng.choice(["counter_increment", "notes_append", "counter_update"])
        result = await self.call(tool, None)
        if result.get("isError"):
            return f"routing without an id answered {text(result)[:160]}"
        self.attacker.increments += tool == "counter_increment"  # it reached the attacker's own counter
        return None


async def own_increment(arena: Arena, principal: Principal) -> str | None:
    """The victim keeps working: its own increments always land on its own counter."""
    result = result_of(await call_in_session(arena.http, principal.token, principal.session, "counter_increment", {}))
    if result.get("isError"):
        return f"{principal.name}'s own increment failed: {text(result)[:160]}"
    principal.increments += 1
    return None


async def test_a_thousand_interleaved_attempts_never_reach_the_other_principals_views(arena: Arena) -> None:
    rng = random.Random(20260728)
    tally: Counter[str] = Counter()
    problems: list[str] = []
    start = {p.name: int(p.views["counter"].data["count"]) for p in (arena.alice, arena.bob)}
    for round_number in range(ROUNDS):
        attacker, victim = (arena.alice, arena.bob) if round_number % 2 else (arena.bob, arena.alice)
        attacks = Attacks(arena, attacker, victim, rng)
        kinds = attacks.kinds()
        chosen = [rng.choice(sorted(kinds)) for _ in range(ATTEMPTS_PER_ROUND)]
        victim_before = victim.increments
        expected = snapshot(victim, plus=1)
        outcomes = await asyncio.gather(
            *(kinds[kind]() for kind in chosen), own_increment(arena, victim), own_increment(arena, attacker)
        )
        for kind, problem in zip(chosen, outcomes, strict=False):
            tally[kind] += 1
            if problem is not None:
                problems.append(f"{attacker.name} by {kind}: {problem}")
        problems += [problem for problem in outcomes[ATTEMPTS_PER_ROUND:] if problem is not None]
        if victim.increments == victim_before + 1 and snapshot(victim) != expected:
            problems.append(f"{attacker.name} changed {victim.name}'s views in round {round_number}")
        assert all(view.is_live for view in victim.views.values())
    for principal in (arena.alice, arena.bob):
        count = int(principal.views["counter"].data["count"])
        if count != start[principal.name] + principal.increments:
            problems.append(
                f"{principal.name}'s count is {count}, not {start[principal.name]} + {principal.increments}"
            )
    attempts = sum(tally.values())
    print(f"isolation: {attempts} attempts, {len(problems)} reached the other's views ({dict(tally)})")
    assert attempts >= 1000 and not problems, problems[:5]
    assert set(tally) == set(Attacks(arena, arena.alice, arena.bob, rng).kinds())


async def test_no_secret_of_one_principal_appears_in_the_others_answers(arena: Arena) -> None:
    rng = random.Random(7)
    for attacker, victim in ((arena.alice, arena.bob), (arena.bob, arena.alice)):
        attacks = Attacks(arena, attacker, victim, rng)
        for tool in TOOLS:
            answer = json.dumps(await attacks.call(tool, None))
            leaked = [secret[:6] for secret in victim.secrets if secret in answer]
            assert not leaked, f"{tool} showed {attacker.name} {victim.name}'s secrets {leaked}"
