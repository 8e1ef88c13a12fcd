"""Settings: defaults, `WEBAPP_*` environment variables, flags that override them, and the listening checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from webapp.core.settings import (
    Settings,
    SettingsError,
    allowed_hosts,
    allowed_origins,
    check_listen_address,
    is_loopback,
    parse_command_line,
)


def test_the_defaults_follow_the_spec() -> None:
    settings = parse_command_line([], {})
    assert (settings.host, settings.port, settings.db, settings.app) == (
        "127.0.0.1",
        8080,
        Path("inventory.db"),
        "views.inventory:build",
    )
    assert (settings.wait_for_live, settings.reconnect_grace, settings.pending_expiry) == (10, 15, 600)
    assert (settings.closed_expiry, settings.call_timeout, settings.browser_confirm) == (1800, 30, True)
    assert not (settings.stdio or settings.open_browser or settings.allow_remote)


def test_webapp_alone_means_webapp_serve() -> None:
    assert parse_command_line(["--port", "0"], {}) == parse_command_line(["serve", "--port", "0"], {})


def test_an_unknown_command_is_refused() -> None:
    with pytest.raises(SettingsError, match="unknown command 'run'"):
        parse_command_line(["run"], {})


def test_environment_variables_set_options_and_flags_override_them() -> None:
    env = {"WEBAPP_PORT": "9000", "WEBAPP_OPEN_BROWSER": "yes", "WEBAPP_TOKEN": "ann=t1, bob=t2", "WEBAPP_DB": "x.db"}
    settings = parse_command_line(["--port", "0", "--no-open-browser"], env)
    assert (settings.port, settings.open_browser, settings.db) == (0, False, Path("x.db"))
    assert settings.tokens == {"t1": "ann", "t2": "bob"}


def test_repeatable_flags_collect_every_value() -> None:
    settings = parse_command_line(["--token", "ann=t1", "--token", "bob=t2", "--allowed-host", "app.test"], {})
    assert settings.token == ["ann=t1", "bob=t2"]
    assert settings.allowed_host == ["app.test"]


def test_an_unknown_option_is_refused_by_name_with_a_suggestion() -> None:
    with pytest.raises(SettingsError, match="unknown option '--alow-remote'; did you mean '--allow-remote'"):
        parse_command_line(["--alow-remote", "--port", "1"], {})
    with pytest.raises(SettingsError, match="unknown option '--no-such-flag'"):
        parse_command_line(["--no-such-flag=1"], {})
    with pytest.raises(SettingsError, match="unexpected argument 'extra'"):
        parse_command_line(["serve", "--port", "1", "extra"], {})


def test_a_shortened_option_is_not_taken_for_the_long_one() -> None:
    with pytest.raises(SettingsError, match="unknown option '--tok'"):
        parse_command_line(["--tok", "ann=t1"], {})


def test_a_malformed_token_is_refused_without_echoing_it() -> None:
    with pytest.raises(SettingsError, match="PRINCIPAL=TOKEN") as raised:
        parse_command_line(["--token", "supersecret"], {})
    assert "supersecret" not in str(raised.value)


def test_the_log_level_is_one_of_the_known_levels_in_any_case() -> None:
    assert parse_command_line([], {"WEBAPP_LOG_LEVEL": "WARNING"}).log_level == "warning"
    assert parse_command_line(["--log-level", "Debug"], {}).log_level == "debug"
    with pytest.raises(SettingsError, match="log-level"):
        parse_command_line([], {"WEBAPP_LOG_LEVEL": "loud"})


def test_views_are_coalesced_every_tenth_of_a_second_unless_told_otherwise_and_never_negatively() -> None:
    assert parse_command_line([], {}).view_coalesce == 0.1
    assert parse_command_line([], {"WEBAPP_VIEW_COALESCE": "0.5"}).view_coalesce == 0.5
    assert parse_command_line(["--view-coalesce", "0"], {"WEBAPP_VIEW_COALESCE": "0.5"}).view_coalesce == 0
    with pytest.raises(SettingsError, match="view-coalesce"):
        parse_command_line(["--view-coalesce", "-1"], {})


def test_app_event_frames_are_paced_by_a_budget_of_redis_deliveries_unless_told_otherwise() -> None:
    assert parse_command_line([], {}).events_budget == 15_000
    assert parse_command_line([], {"WEBAPP_EVENTS_BUDGET": "5000"}).events_budget == 5000
    assert parse_command_line(["--events-budget", "0"], {"WEBAPP_EVENTS_BUDGET": "5000"}).events_budget == 0
    with pytest.raises(SettingsError, match="events-budget"):
        parse_command_line(["--events-budget", "-1"], {})


def test_a_bad_boolean_in_the_environment_is_refused() -> None:
    with pytest.raises(SettingsError, match="WEBAPP_STDIO"):
        parse_command_line([], {"WEBAPP_STDIO": "maybe"})


def test_the_base_url_must_be_http_and_loses_its_trailing_slash() -> None:
    assert Settings(base_url="https://proxy.test/app/").base_url == "https://proxy.test/app"
    with pytest.raises(SettingsError, match="base-url"):
        parse_command_line(["--base-url", "proxy.test"], {})


def test_loopback_names_and_addresses_are_recognised() -> None:
    assert all(is_loopback(host) for host in ("127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"))
    assert not any(is_loopback(host) for host in ("0.0.0.0", "::", "192.168.1.5", "example.test"))


def test_a_non_loopback_host_needs_allow_remote() -> None:
    check_listen_address(Settings(host="::1"))
    check_listen_address(Settings(host="0.0.0.0", allow_remote=True))
    with pytest.raises(SettingsError, match="--allow-remote"):
        check_listen_address(Settings(host="0.0.0.0"))


def test_allowed_hosts_and_origins_are_the_loopback_names_on_the_serving_port_plus_extras() -> None:
    settings = Settings(allowed_host=["app.test", "proxy.test:443"], allowed_origin=["https://ui.test/"])
    assert allowed_hosts(settings, 8123) == [
        "127.0.0.1:8123",
        "localhost:8123",
        "[::1]:8123",
        "app.test",
        "app.test:8123",
        "proxy.test:443",
    ]
    assert allowed_origins(settings, 8123) == [
        "http://127.0.0.1:8123",
        "http://localhost:8123",
        "http://[::1]:8123",
        "https://ui.test",
    ]


def test_the_base_url_and_a_remote_listening_address_are_allowed_too() -> None:
    settings = Settings(host="192.168.1.5", allow_remote=True, base_url="https://proxy.test/x")
    assert allowed_hosts(settings, 80)[3:] == ["192.168.1.5:80", "proxy.test"]
    assert allowed_origins(settings, 80)[3:] == ["http://192.168.1.5:80", "https://proxy.test"]


def test_the_command_exits_2_naming_an_unknown_option(capsys: pytest.CaptureFixture[str]) -> None:
    from webapp.server.cli import main

    assert main(["serve", "--alow-remote"]) == 2
    assert "unknown option '--alow-remote'; did you mean '--allow-remote'?" in capsys.readouterr().err


def test_sign_in_options_are_checked_together() -> None:
    assert parse_command_line(["--auth-issuer", "http://127.0.0.1:9000"], {}).auth_scope == "webapp"
    with pytest.raises(SettingsError, match="https:// URL"):
        parse_command_line(["--auth-issuer", "http://id.example"], {})
    with pytest.raises(SettingsError, match="need --auth-issuer"):
        parse_command_line(["--auth-client-id", "web"], {"WEBAPP_AUTH_CLIENT_SECRET": "s"})
    with pytest.raises(SettingsError, match="go together"):
        parse_command_line(["--auth-issuer", "https://id.example", "--auth-client-id", "web"], {})
    with pytest.raises(SettingsError, match="one word"):
        parse_command_line(["--auth-scope", "a b"], {})


def test_a_static_principal_cannot_look_like_a_signed_in_one() -> None:
    with pytest.raises(SettingsError, match="may not contain '#' or '://'"):
        parse_command_line(["--token", "https://id.example#ann=t1"], {})
