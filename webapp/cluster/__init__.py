"""Several workers (apps.md §14): the Redis engine `--redis-url` names, a heartbeat per worker and a directory of
attached views, request-reply between workers over sharded pub/sub, the bridge's transport built on them, app events
relayed between workers, and `install_cluster` for `webapp serve --redis-url`."""

from webapp.cluster.engine import Client, Engine
from webapp.cluster.inbox import Inbox, OwnerGone, RequestTimeout, Unacknowledged
from webapp.cluster.leases import HEARTBEAT_TTL, ClusterUnavailable, Lease, Leases, heartbeat_key, inbox_channel
from webapp.cluster.node import ClusterHost, Node, install_cluster, worker_id
from webapp.cluster.relay import EVENTS_CHANNEL, EventRelay
from webapp.cluster.transport import RedisTransport

__all__ = [
    "EVENTS_CHANNEL",
    "HEARTBEAT_TTL",
    "Client",
    "ClusterHost",
    "ClusterUnavailable",
    "Engine",
    "EventRelay",
    "Inbox",
    "Lease",
    "Leases",
    "Node",
    "OwnerGone",
    "RedisTransport",
    "RequestTimeout",
    "Unacknowledged",
    "heartbeat_key",
    "inbox_channel",
    "install_cluster",
    "worker_id",
]
