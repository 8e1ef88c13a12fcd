"""Several workers: owner leases of attached views and request-reply between workers, over Redis."""

from webapp.cluster.inbox import Inbox, OwnerGone, RequestTimeout
from webapp.cluster.leases import ClusterUnavailable, Lease, Leases, digest

__all__ = ["ClusterUnavailable", "Inbox", "Lease", "Leases", "OwnerGone", "RequestTimeout", "digest"]
