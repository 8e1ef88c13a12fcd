"""Secrets (attach keys, view handles, session ids, tokens) masked wherever they appear in a text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK_PREFIX", "Masker", "mask_secret"]

MASK_PREFIX = 6


def mask_secret(secret: str) -> str:
    """`secret` shown masked: its first 6 characters and `…`."""
    return secret[:MASK_PREFIX] + "…"


class Masker:
    """Replaces every registered secret substring by its masked form.

    A secret lies inside a run of the characters secrets are made of: one regular-expression pass finds the runs
    long enough to hold one, and only those are looked up (a text costs the same with a thousand secrets as with
    one; an alternation of every secret tried each of them at every position).
    """

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._runs: re.Pattern[str] | None = None
        self._lengths: list[int] = []  # of the secrets, longest first

    def add(self, secret: str | None) -> None:
        if secret and secret not in self._secrets:
            self._secrets.add(secret)
            self._runs = None

    def discard(self, secret: str) -> None:
        if secret in self._secrets:
            self._secrets.discard(secret)
            self._runs = None

    def __contains__(self, secret: str) -> bool:
        return secret in self._secrets

    def __len__(self) -> int:
        return len(self._secrets)

    def text(self, text: str) -> str:
        if not self._secrets:
            return text
        if self._runs is None:
            alphabet = re.escape("".join(sorted({char for secret in self._secrets for char in secret})))
            self._lengths = sorted({len(secret) for secret in self._secrets}, reverse=True)
            self._runs = re.compile(f"[{alphabet}]{{{self._lengths[-1]},}}")
        return self._runs.sub(self._masked, text)

    def value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string (keys too) masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(key)): self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value

    def _masked(self, match: re.Match[str]) -> str:
        """One run with its secrets masked: at each position, the longest secret that starts there."""
        run, secrets = match.group(0), self._secrets
        if run in secrets:
            return mask_secret(run)
        pieces: list[str] = []
        start = position = 0
        while position < len(run):
            left = len(run) - position
            found = next((n for n in self._lengths if n <= left and run[position : position + n] in secrets), 0)
            if found:
                pieces += [run[start:position], mask_secret(run[position : position + found])]
                position = start = position + found
            else:
                position += 1
        return "".join([*pieces, run[start:]])
