"""Helpers for the operator's routes: scrape `/metrics` into samples (`prometheus_client`'s own parser), probe
`/readyz` and time its answer, and run `promtool`."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Probe", "Samples", "probe", "promtool", "scrape"]


@dataclass(frozen=True)
class Samples:
    """One scrape: its text, and every sample by name and labels."""

    text: str
    values: Mapping[tuple[str, frozenset[tuple[str, str]]], float]

    @classmethod
    def parse(cls, text: str) -> Samples:
        values: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                values[(sample.name, frozenset(sample.labels.items()))] = sample.value
        return cls(text, values)

    def get(self, name: str, **labels: str) -> float:
        """The sample's value; 0 when the scrape has no such sample (a labelled counter not counted yet)."""
        return self.values.get((name, frozenset(labels.items())), 0.0)

    def has(self, name: str) -> bool:
        return any(sample == name for sample, _ in self.values)

    def label_values(self) -> set[str]:
        return {value for _, labels in self.values for _, value in labels}


def scrape(url: str, **headers: str) -> Samples:
    answer = httpx.get(url, headers=headers, timeout=10)
    answer.raise_for_status()
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4"), answer.headers
    return Samples.parse(answer.text)


@dataclass(frozen=True)
class Probe:
    """One probe's answer and how long it took."""

    status: int
    body: dict[str, Any]
    seconds: float


def probe(url: str, **headers: str) -> Probe:
    started = time.perf_counter()
    answer = httpx.get(url, headers=headers, timeout=10)
    seconds = time.perf_counter() - started
    assert answer.headers["content-type"] == "application/json", answer.headers
    return Probe(answer.status_code, answer.json(), seconds)


def promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`promtool ARGS` (Debian's prometheus package, installed by `make test`)."""
    return subprocess.run(["promtool", *args], input=stdin, capture_output=True, text=True, timeout=60, check=False)
