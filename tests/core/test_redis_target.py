"""`--redis-url`'s forms: one Redis, a Redis Cluster, a master found through Sentinel, each with TLS; a bad URL is
refused with the rule, the value without its passwords, and the accepted forms."""

from __future__ import annotations

import pytest

from webapp.core import Settings
from webapp.core.redis_target import RedisTarget, RedisTargetError, parse_redis_url


@pytest.mark.parametrize(
    "url",
    ["redis://127.0.0.1:6379/0", "rediss://:pw@cache.example:6380/2", "unix:///run/redis.sock?db=1"],
)
def test_a_plain_redis_url_goes_to_redis_py_as_it_is(url: str) -> None:
    assert parse_redis_url(url) == RedisTarget("plain", url, tls=url.startswith("rediss"))


def test_a_cluster_url_names_its_seed_nodes_with_tls_and_credentials() -> None:
    url = "rediss+cluster://app:s3cret@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002?ssl_ca_certs=/etc/ca.pem"
    assert parse_redis_url(url) == RedisTarget(
        "cluster",
        url,
        (("10.0.0.1", 7000), ("10.0.0.2", 7001), ("::1", 7002)),
        tls=True,
        username="app",
        password="s3cret",
        ca_certs="/etc/ca.pem",
    )


def test_a_sentinel_url_names_the_sentinels_the_master_its_database_and_both_passwords() -> None:
    url = "redis+sentinel://:sentinel-pw@s1:26379,s2:26380/mymaster/3?password=master-pw"
    assert parse_redis_url(url) == RedisTarget(
        "sentinel",
        url,
        (("s1", 26379), ("s2", 26380)),
        password="master-pw",
        master="mymaster",
        db=3,
        sentinel_password="sentinel-pw",
    )
    assert parse_redis_url("rediss+sentinel://s1:26379/m").tls


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("http://cache:6379", "the scheme 'http' is not one of them"),
        ("redis+shards://a:1", "the scheme 'redis+shards' is not one of them"),
        ("redis+cluster://a:1,b", "every node must be host:port, not 'b'"),
        ("redis+cluster://a:70000", "every node must be host:port, not 'a:70000'"),
        ("redis+cluster://a:1/2", "Redis Cluster has one database only: drop the path"),
        ("redis+sentinel://:pw@s1:26379", "a Sentinel URL names the master after the sentinels"),
        ("redis+sentinel://s1:26379/m/x?password=secret", "the database after the master must be a number, not 'x'"),
    ],
)
def test_a_bad_url_is_refused_with_the_rule_the_value_without_passwords_and_the_forms(url: str, rule: str) -> None:
    with pytest.raises(RedisTargetError) as refused:
        parse_redis_url(url)
    message = str(refused.value)
    assert rule in message and "Use one of: redis://" in message and "redis+sentinel://" in message
    assert "secret" not in message and ":pw@" not in message


def test_settings_refuse_a_bad_redis_url_and_take_the_cluster_and_sentinel_forms() -> None:
    with pytest.raises(ValueError, match="Use one of"):
        Settings(redis_url="redis+cluster://nowhere")
    key = "k" * 32  # several workers share the key of the request state
    assert Settings(redis_url="redis+cluster://a:1,b:2", request_state_key=key).redis_url == "redis+cluster://a:1,b:2"
    assert (
        Settings(redis_url="redis+sentinel://s:26379/m", request_state_key=key).redis_url
        == "redis+sentinel://s:26379/m"
    )
