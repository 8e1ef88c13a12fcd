"""The banner `webapp serve` prints at start (where it serves pages, MCP and metrics): lines of text, or with
`--log-format json` one JSON object shaped like a log line, so that everything such a server writes parses."""

from __future__ import annotations

import logging
from dataclasses import dataclass

__all__ = ["Banner"]


@dataclass(frozen=True, slots=True)
class Banner:
    """Where a server serves: its base URL, its pages, MCP (and whether on stdio too), and `/metrics` on the serving
    port and on `--metrics-port` (None where not served)."""

    url: str
    pages: tuple[str, ...]
    mcp: str
    stdio: bool
    metrics: str | None
    metrics_port: str | None

    def lines(self, json_lines: logging.Formatter | None = None) -> list[str]:
        """The banner as text, or as one line of `json_lines` (the server's JSON log formatter: the same `time`,
        `level`, `logger`, `message` and `worker` keys as its log lines, and this banner's fields)."""
        message = f"webapp serving on {self.url}"
        if json_lines is not None:
            fields = {
                "event": "serving",
                "url": self.url,
                "pages": list(self.pages),
                "mcp": self.mcp,
                "stdio": self.stdio,
                "metrics": self.metrics,
                "metrics_port": self.metrics_port,
            }
            record = logging.makeLogRecord(
                {"name": __name__, "levelno": logging.INFO, "levelname": "INFO", "msg": message, **fields}
            )
            return [json_lines.format(record)]
        lines = [message, *(f"  page {page}" for page in self.pages)]
        lines.append(f"  MCP  {self.mcp}" + ("  (and MCP on stdin/stdout)" if self.stdio else ""))
        if self.metrics is not None:
            lines.append(f"  metrics {self.metrics}")
        if self.metrics_port is not None:
            lines.append(f"  metrics {self.metrics_port}  (and /healthz, /readyz on that port)")
        return lines
