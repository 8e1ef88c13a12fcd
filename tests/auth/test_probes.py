"""With sign-in on, the operator's routes answer without it (a kubelet, a balancer and a scraper sign in nowhere)
while the pages still send a person to the issuer and /mcp still asks for a token."""

from __future__ import annotations

import httpx

from tests.support.e2e import RunningServer
from tests.support.ops import probe, scrape


def test_the_probes_and_metrics_answer_without_sign_in_while_pages_and_mcp_still_need_it(signed: RunningServer) -> None:
    assert probe(signed.base_url + "/healthz").status == 200
    assert probe(signed.base_url + "/readyz", Host="10.0.0.7:8080").body["status"] == "ready"
    assert scrape(signed.base_url + "/metrics").get("webapp_ready") == 1
    assert httpx.get(signed.base_url + "/viewer").status_code == 303  # to the issuer's login
    assert httpx.post(signed.mcp_url, json={}).status_code == 401
