"""App events: publish/subscribe by topic with JSON payloads, delivered asynchronously on each subscriber's loop."""

from webapp.events.bus import RESYNC, AppEvents, BatchHandler, Event, EventHandler, JsonValue, Relay, Subscription

__all__ = ["RESYNC", "AppEvents", "BatchHandler", "Event", "EventHandler", "JsonValue", "Relay", "Subscription"]
