"""The Python side of the parser parity test: a JSON list of text arrays on stdin, their parsed blocks on stdout.

Each array becomes `[dataclasses.asdict(block) for block in parse_blocks(texts)]`; stdout is one JSON list of them.
"""

from __future__ import annotations

import dataclasses
import json
import sys

from webapp.wire import parse_blocks


def main() -> None:
    results: list[list[str]] = json.loads(sys.stdin.buffer.read())
    parsed = [[dataclasses.asdict(block) for block in parse_blocks(texts)] for texts in results]
    sys.stdout.write(json.dumps(parsed))


if __name__ == "__main__":
    main()
