"""App events: publish/subscribe by topic with JSON payloads, delivered asynchronously on each subscriber's loop."""

from webapp.events.bus import AppEvents, Event, EventHandler, JsonValue, Relay, Subscription

__all__ = ["AppEvents", "Event", "EventHandler", "JsonValue", "Relay", "Subscription"]
