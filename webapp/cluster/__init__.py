"""Several workers (apps.md §14): owner leases of attached views and request-reply between workers over Redis, the
bridge's transport built on them, app events relayed between workers, and `install_cluster` for `webapp serve
--redis-url`."""

from webapp.cluster.inbox import Inbox, OwnerGone, RequestTimeout
from webapp.cluster.leases import ClusterUnavailable, Lease, Leases, inbox_channel
from webapp.cluster.node import ClusterHost, Node, install_cluster, worker_id
from webapp.cluster.relay import EVENTS_CHANNEL, EventRelay
from webapp.cluster.transport import RedisTransport

__all__ = [
    "EVENTS_CHANNEL",
    "ClusterHost",
    "ClusterUnavailable",
    "EventRelay",
    "Inbox",
    "Lease",
    "Leases",
    "Node",
    "OwnerGone",
    "RedisTransport",
    "RequestTimeout",
    "inbox_channel",
    "install_cluster",
    "worker_id",
]
