"""What can be checked of deploy/ without a cluster or Docker: the kustomize manifests, rendered by the kubectl on PATH
and read for probes, Host headers, drain, affinity and disruption budgets; every HAProxy file through `haproxy -c`;
the compose files against the compose-spec schema and read for what `--scale` and a clean stop need."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.haproxy import CONFIG, DNS_CONFIG
from webapp.core.settings import ENV_PREFIX, Settings

DEPLOY = CONFIG.parent
KUSTOMIZE = DEPLOY / "k8s"
COMPOSE = DEPLOY / "compose.yaml"
SENTINEL = DEPLOY / "redis" / "sentinel.yaml"
CHECK_JSONSCHEMA = [sys.executable, "-m", "check_jsonschema"]  # the pinned one of the test extra
_UNWIND = 5  # seconds a stop needs beyond the drain: the calls' unwinding and the shutdown hooks
_TIMEOUT = 30

Manifest = dict[str, Any]


@pytest.fixture(scope="module")
def rendered() -> list[Manifest]:
    kubectl = shutil.which("kubectl")
    assert kubectl is not None, "kubectl is missing: `make services` installs Debian's kubernetes-client"
    done = subprocess.run(
        [kubectl, "kustomize", str(KUSTOMIZE)], capture_output=True, text=True, timeout=_TIMEOUT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "deprecated" not in done.stderr.lower(), done.stderr  # a field a newer kustomize is dropping
    return [document for document in yaml.safe_load_all(done.stdout) if document]


def named(rendered: list[Manifest], kind: str, name: str) -> Manifest:
    """The one rendered `kind` called `name` (a generated one: `name` and its hash suffix)."""
    found = [
        item
        for item in rendered
        if item["kind"] == kind and re.fullmatch(re.escape(name) + r"(-[a-z0-9]{10})?", item["metadata"]["name"])
    ]
    assert len(found) == 1, f"{kind} {name}: {len(found)} rendered"
    return found[0]


def pod(workload: Manifest) -> dict[str, Any]:
    return workload["spec"]["template"]


def container(workload: Manifest) -> dict[str, Any]:
    containers = pod(workload)["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and selector.items() <= labels.items()


def env_of(item: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {variable["name"]: variable for variable in item.get("env", [])}


def worker_environment(rendered: list[Manifest]) -> dict[str, str]:
    """The WEBAPP_* variables a worker pod gets from its ConfigMap and Secret (decoded)."""
    config = named(rendered, "ConfigMap", "webapp-config")["data"]
    secret = named(rendered, "Secret", "webapp-secrets")["data"]
    return {**config, **{key: base64.b64decode(value).decode() for key, value in secret.items()}}


def seconds(duration: str) -> float:
    """A compose duration such as '20s', '1m30s'."""
    parts = re.fullmatch(r"(?:(\d+)m)?(?:(\d+)s)?", duration)
    assert parts is not None and duration, duration
    return int(parts.group(1) or 0) * 60 + int(parts.group(2) or 0)


def interpolated(value: str, given: dict[str, str]) -> str:
    """A compose value with its `${NAME}`, `${NAME:-default}` and `${NAME:?error}` filled as `docker compose` would
    with the variables `given`."""

    def fill(match: re.Match[str]) -> str:
        name, default, required = match.group(1), match.group(2), match.group(3)
        if name in given:
            return given[name]
        assert required is None, f"compose needs {name}: {required}"
        return default or ""

    return re.sub(r"\$\{(\w+)(?::-([^}]*)|:\?([^}]*))?\}", fill, value)


def compose(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


# Kubernetes


def test_kustomize_renders_workers_a_balancer_their_services_budgets_config_and_secrets(
    rendered: list[Manifest],
) -> None:
    kinds = sorted((item["kind"], re.sub(r"-[a-z0-9]{10}$", "", item["metadata"]["name"])) for item in rendered)
    assert kinds == [
        ("ConfigMap", "webapp-config"),
        ("ConfigMap", "webapp-haproxy"),
        ("Deployment", "webapp-haproxy"),
        ("PodDisruptionBudget", "webapp-haproxy"),
        ("PodDisruptionBudget", "webapp-worker"),
        ("Secret", "webapp-haproxy-secrets"),
        ("Secret", "webapp-secrets"),
        ("Service", "webapp"),
        ("Service", "webapp-workers"),
        ("StatefulSet", "webapp-worker"),
    ]


def test_each_worker_keeps_its_pod_name_as_its_id_behind_a_headless_service(rendered: list[Manifest]) -> None:
    workers, headless = named(rendered, "StatefulSet", "webapp-worker"), named(rendered, "Service", "webapp-workers")
    assert headless["spec"]["clusterIP"] == "None"
    assert workers["spec"]["serviceName"] == headless["metadata"]["name"]
    assert selects(headless["spec"]["selector"], pod(workers)["metadata"]["labels"])
    assert selects(workers["spec"]["selector"]["matchLabels"], pod(workers)["metadata"]["labels"])
    worker_id = env_of(container(workers))["WEBAPP_WORKER_ID"]
    assert worker_id["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert workers["spec"]["replicas"] >= 2


def test_workers_are_probed_live_on_healthz_and_ready_on_readyz_on_their_port_without_a_host_header(
    rendered: list[Manifest],
) -> None:
    worker = container(named(rendered, "StatefulSet", "webapp-worker"))
    ports = {port["name"]: port["containerPort"] for port in worker["ports"]}
    assert ports["http"] == int(worker_environment(rendered)["WEBAPP_PORT"])
    paths = {probe: worker[probe]["httpGet"]["path"] for probe in ("startupProbe", "livenessProbe", "readinessProbe")}
    assert paths == {"startupProbe": "/healthz", "livenessProbe": "/healthz", "readinessProbe": "/readyz"}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert worker[probe]["httpGet"]["port"] == "http"
        # /healthz and /readyz answer any Host (a kubelet sends the pod's address): no header to keep in step
        assert "httpHeaders" not in worker[probe]["httpGet"], probe
    assert worker["readinessProbe"]["periodSeconds"] * worker["readinessProbe"]["failureThreshold"] <= 5


def test_a_stopping_worker_waits_in_prestop_then_drains_within_its_grace(rendered: list[Manifest]) -> None:
    workers = named(rendered, "StatefulSet", "webapp-worker")
    command = container(workers)["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep" and len(command) == 2
    drain = Settings.from_sources([], worker_environment(rendered)).drain_timeout
    grace = pod(workers)["spec"]["terminationGracePeriodSeconds"]
    assert grace >= int(command[1]) + drain + _UNWIND


def test_workers_and_balancers_spread_over_nodes_and_keep_a_disruption_budget(rendered: list[Manifest]) -> None:
    for kind, name in (("StatefulSet", "webapp-worker"), ("Deployment", "webapp-haproxy")):
        workload = named(rendered, kind, name)
        labels = pod(workload)["metadata"]["labels"]
        spread = pod(workload)["spec"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        assert [term["podAffinityTerm"]["topologyKey"] for term in spread] == ["kubernetes.io/hostname"]
        assert selects(spread[0]["podAffinityTerm"]["labelSelector"]["matchLabels"], labels)
        budget = named(rendered, "PodDisruptionBudget", name)
        assert budget["apiVersion"] == "policy/v1"
        assert selects(budget["spec"]["selector"]["matchLabels"], labels)
        replicas = workload["spec"]["replicas"]
        left = replicas - budget["spec"]["maxUnavailable"] if "maxUnavailable" in budget["spec"] else None
        left = budget["spec"].get("minAvailable", left)
        assert left is not None and 1 <= left < replicas, (name, budget["spec"])  # a drain may go on, one at a time


def test_every_container_requests_cpu_and_memory_and_limits_its_memory(rendered: list[Manifest]) -> None:
    for kind, name in (("StatefulSet", "webapp-worker"), ("Deployment", "webapp-haproxy")):
        resources = container(named(rendered, kind, name))["resources"]
        assert set(resources["requests"]) == {"cpu", "memory"}, name
        assert "memory" in resources["limits"], name


def test_the_workers_get_their_settings_from_the_config_map_and_their_secrets_from_the_secret(
    rendered: list[Manifest],
) -> None:
    worker = container(named(rendered, "StatefulSet", "webapp-worker"))
    sources = {next(iter(source)): next(iter(source.values()))["name"] for source in worker["envFrom"]}
    assert sources == {
        "configMapRef": named(rendered, "ConfigMap", "webapp-config")["metadata"]["name"],
        "secretRef": named(rendered, "Secret", "webapp-secrets")["metadata"]["name"],
    }
    environment = {**worker_environment(rendered), "WEBAPP_WORKER_ID": "webapp-worker-0"}
    known = {ENV_PREFIX + field.upper() for field in Settings.model_fields}
    assert set(environment) <= known, set(environment) - known  # a misspelt variable would be ignored silently
    settings = Settings.from_sources([], environment)
    assert settings.redis_url and settings.base_url and settings.allow_remote and settings.token
    config = named(rendered, "ConfigMap", "webapp-config")["data"]
    secrets = {"WEBAPP_DB", "WEBAPP_TOKEN", "WEBAPP_AUTH_CLIENT_SECRET", "WEBAPP_REQUEST_STATE_KEY"}
    assert not secrets & set(config)  # secrets in the Secret only
    assert not any(re.search(r"//[^/@]*:[^/@]*@", value) for value in config.values())  # no password in a URL


def test_the_balancer_runs_the_compose_haproxy_config_against_the_headless_service(rendered: list[Manifest]) -> None:
    balancer = named(rendered, "Deployment", "webapp-haproxy")
    config = named(rendered, "ConfigMap", "webapp-haproxy")
    assert config["data"] == {"haproxy.cfg": DNS_CONFIG.read_text(encoding="utf-8")}  # the very file compose mounts
    haproxy = container(balancer)
    volume = next(item for item in pod(balancer)["spec"]["volumes"] if item["name"] == "config")
    assert volume["configMap"]["name"] == config["metadata"]["name"]
    mount = next(item for item in haproxy["volumeMounts"] if item["name"] == "config")
    assert mount["mountPath"] == "/usr/local/etc/haproxy"  # the official image reads haproxy.cfg there
    headless = named(rendered, "Service", "webapp-workers")
    port = next(item["port"] for item in headless["spec"]["ports"] if item["name"] == "http")
    env = env_of(haproxy)
    assert env["POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    service_name = headless["metadata"]["name"]
    assert env["WEBAPP_WORKERS"]["value"] == f"{service_name}.$(POD_NAMESPACE).svc.cluster.local:{port}"
    assert "WEBAPP_DNS" not in env  # the cluster DNS, from /etc/resolv.conf
    key = env["WEBAPP_COOKIE_KEY"]["valueFrom"]["secretKeyRef"]
    secret = named(rendered, "Secret", "webapp-haproxy-secrets")
    assert key["name"] == secret["metadata"]["name"] and key["key"] in secret["data"]
    ports = {item["name"]: item["containerPort"] for item in haproxy["ports"]}
    assert env["WEBAPP_LB"]["value"] == f":{ports['http']}" and env["WEBAPP_HEALTH"]["value"] == f":{ports['health']}"
    assert haproxy["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    public = named(rendered, "Service", "webapp")
    assert selects(public["spec"]["selector"], pod(balancer)["metadata"]["labels"])
    assert [item["targetPort"] for item in public["spec"]["ports"]] == ["http"]
    # `balance source` needs the client's address; each replica's stick table needs the client back on it
    assert public["spec"]["externalTrafficPolicy"] == "Local" and public["spec"]["sessionAffinity"] == "ClientIP"


# HAProxy


def backend(text: str, name: str) -> list[str]:
    """The directives of backend `name`, without its servers and comments."""
    lines = text.split(f"\nbackend {name}\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith(("server", "#"))]


def test_the_dns_config_keeps_the_stickiness_of_the_hand_listed_one() -> None:
    listed, resolved = CONFIG.read_text(encoding="utf-8"), DNS_CONFIG.read_text(encoding="utf-8")
    assert backend(resolved, "mcp") == backend(listed, "mcp")  # the Mcp-Session-Id stick table
    cookie = "cookie WEBAPP_WORKER insert indirect nocache httponly"
    assert backend(listed, "pages") == ["balance source", "hash-type consistent", cookie]
    assert backend(resolved, "pages") == [
        "balance source",
        "hash-type consistent",
        cookie + " dynamic",
        'dynamic-cookie-key "${WEBAPP_COOKIE_KEY}"',
    ]
    assert resolved.count('server-template w 1-20 "${WEBAPP_WORKERS}"') == 2


@pytest.mark.parametrize("path", sorted(DEPLOY.rglob("*.cfg")), ids=lambda path: str(path.relative_to(DEPLOY)))
@pytest.mark.parametrize("name_server", ["127.0.0.11:53", None], ids=["docker-dns", "resolv-conf"])
def test_every_haproxy_file_in_deploy_passes_haproxy_check(path: Path, name_server: str | None) -> None:
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "WEBAPP_LB": "127.0.0.1:8080",
        "WEBAPP_W1": "127.0.0.1:8081",
        "WEBAPP_W2": "127.0.0.1:8082",
        "WEBAPP_WORKERS": "worker:8080",
        "WEBAPP_COOKIE_KEY": "a-test-key",
    }
    if name_server:
        env["WEBAPP_DNS"] = name_server
    done = subprocess.run(["haproxy", "-c", "-f", str(path)], env=env, capture_output=True, text=True, timeout=_TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[WARNING]" not in done.stdout + done.stderr


# Compose


@pytest.mark.parametrize("path", [COMPOSE, SENTINEL], ids=lambda path: str(path.relative_to(DEPLOY)))
def test_the_compose_files_follow_the_compose_spec(path: Path, tmp_path: Path) -> None:
    check = [*CHECK_JSONSCHEMA, "--builtin-schema", "vendor.compose-spec", "--no-cache"]
    done = subprocess.run([*check, str(path)], capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = tmp_path / "compose.yaml"  # the schema is really applied: a misspelt key fails
    broken.write_text(path.read_text(encoding="utf-8") + "\nservices_typo: {}\n", encoding="utf-8")
    done = subprocess.run([*check, str(broken)], capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    assert done.returncode == 1, done.stdout + done.stderr


def test_compose_workers_scale_behind_haproxy_and_stop_within_their_grace() -> None:
    services = compose(COMPOSE)["services"]
    worker, haproxy = services["worker"], services["haproxy"]
    assert not {"container_name", "ports", "hostname"} & set(worker)  # each would stop `--scale worker=N`
    given = {  # what its header says to set
        "POSTGRES_PASSWORD": "a-password",
        "WEBAPP_TOKEN": "agent=a-token",
        "WEBAPP_REQUEST_STATE_KEY": "k" * 32,
    }
    environment = {key: interpolated(str(value), given) for key, value in worker["environment"].items()}
    assert "WEBAPP_WORKER_ID" not in environment  # each container: its host name and port
    settings = Settings.from_sources([], environment)
    assert settings.redis_url == "redis://redis:6379/0" and str(settings.db).startswith("postgresql://")
    assert seconds(worker["stop_grace_period"]) >= settings.drain_timeout + _UNWIND
    assert worker.get("stop_signal", "SIGTERM") == "SIGTERM"
    assert "/healthz" in " ".join(worker["healthcheck"]["test"])
    assert worker["depends_on"] == {name: {"condition": "service_healthy"} for name in ("redis", "postgres")}
    assert (COMPOSE.parent / haproxy["volumes"][0].split(":")[0]).resolve() == DNS_CONFIG
    assert haproxy["environment"]["WEBAPP_DNS"] == "127.0.0.11:53"  # Docker's DNS
    assert haproxy["environment"]["WEBAPP_WORKERS"] == f"worker:{settings.port}"
    assert {"healthcheck", "image"} <= set(services["redis"]) and {"healthcheck", "image"} <= set(services["postgres"])
    redis = services["redis"]["command"]
    assert redis[redis.index("--maxmemory-policy") + 1] == "noeviction"  # heartbeats carry TTLs: never evict them


def test_the_sentinel_example_gives_the_workers_a_sentinel_url_and_three_sentinels() -> None:
    services = compose(SENTINEL)["services"]
    sentinels = [name for name in services if name.startswith("sentinel-")]
    assert len(sentinels) == 3
    for name in sentinels:
        assert "sentinel monitor mymaster redis 6379 2" in "\n".join(services[name]["command"])
    url = services["worker"]["environment"]["WEBAPP_REDIS_URL"]
    assert url == "redis+sentinel://" + ",".join(f"{name}:26379" for name in sentinels) + "/mymaster/0"
    assert "redis-replica" in services and "--replicaof" in services["redis-replica"]["command"]
