"""NiceGUI views that agents drive over MCP (one package per app)."""
