"""Helpers shared by the tests: a test app factory, a server launcher, MCP client and browser helpers."""
