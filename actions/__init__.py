"""The inventory product: its domain model, its store and the actions agents and people take on it."""
