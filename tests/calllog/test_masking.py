"""Masking secrets in text: the same result as trying every secret at every position, longest first, at a cost
that does not grow with the number of secrets."""

from __future__ import annotations

import random
import re
import secrets
import string

from webapp.calllog.masking import Masker, mask_secret

TOKEN = string.ascii_letters + string.digits + "-_"


def _reference(registered: list[str], text: str) -> str:
    """Every secret tried at every position, the longest first: one alternation of them all."""
    ordered = sorted(registered, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(secret) for secret in ordered))
    return pattern.sub(lambda match: mask_secret(match.group(0)), text)


def test_a_secret_inside_a_longer_run_of_token_characters_is_masked_and_its_neighbours_kept() -> None:
    masker = Masker()
    handle = secrets.token_urlsafe(24)
    masker.add(handle)
    assert masker.text(f"view=xy{handle}-z.") == f"view=xy{mask_secret(handle)}-z."
    assert masker.text(f"{handle}{handle}") == mask_secret(handle) * 2


def test_random_texts_are_masked_as_the_alternation_of_every_secret_masks_them() -> None:
    rng = random.Random(20261203)
    registered = ["".join(rng.choices(TOKEN, k=rng.choice((22, 32, 43)))) for _ in range(300)]
    registered += [registered[0][:10], registered[1] + "Zq"]  # one inside another, one around another
    masker = Masker()
    for secret in registered:
        masker.add(secret)
    for _ in range(300):
        filler = ("".join(rng.choices(TOKEN + " .:/=\n", k=rng.randint(0, 30))) for _ in range(8))
        parts = [rng.choice(registered) if rng.random() < 0.3 else next(filler) for _ in range(rng.randint(1, 8))]
        text = "".join(parts)
        assert masker.text(text) == _reference(registered, text), text


def test_a_discarded_secret_is_shown_again() -> None:
    masker = Masker()
    kept, dropped = secrets.token_urlsafe(24), secrets.token_hex(16)
    masker.add(kept)
    masker.add(dropped)
    masker.discard(dropped)
    assert masker.text(f"{kept} {dropped}") == f"{mask_secret(kept)} {dropped}"
