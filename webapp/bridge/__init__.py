"""The session bridge: views and their life cycle, routing, dispatch into NiceGUI clients, tabs, persistence,
and the opening, update and action tools of every app."""

from webapp.bridge.app_tools import (
    VIEW_PROPERTY,
    AppServer,
    OpenedView,
    app_result,
    app_tools,
    first_sentence,
    install_apps,
    update_description,
)
from webapp.bridge.dispatch import Bridge, BridgeSettings, Opened
from webapp.bridge.errors import ViewError, ViewErrorCode
from webapp.bridge.island import Island
from webapp.bridge.record import OPEN_STATES, ViewRecord, ViewState, mask, view_digest
from webapp.bridge.registry import ViewRegistry
from webapp.bridge.routing import Router
from webapp.bridge.store import ViewRow, ViewStore
from webapp.bridge.tabs import ELSEWHERE_NOTICE, REPLACED_NOTICE, TAKEN_OVER_NOTICE, UNKNOWN_NOTICE, Tabs
from webapp.bridge.transport import Forwarded, LocalTransport, Transport

__all__ = [
    "ELSEWHERE_NOTICE",
    "OPEN_STATES",
    "REPLACED_NOTICE",
    "TAKEN_OVER_NOTICE",
    "UNKNOWN_NOTICE",
    "VIEW_PROPERTY",
    "AppServer",
    "Bridge",
    "BridgeSettings",
    "Forwarded",
    "Island",
    "LocalTransport",
    "Opened",
    "OpenedView",
    "Router",
    "Tabs",
    "Transport",
    "ViewError",
    "ViewErrorCode",
    "ViewRecord",
    "ViewRegistry",
    "ViewRow",
    "ViewState",
    "ViewStore",
    "app_result",
    "app_tools",
    "first_sentence",
    "install_apps",
    "mask",
    "update_description",
    "view_digest",
]
