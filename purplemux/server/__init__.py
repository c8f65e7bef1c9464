"""The HTTP and WebSocket face of the daemon."""
