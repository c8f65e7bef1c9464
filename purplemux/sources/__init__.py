"""Adapters that turn what Claude leaves behind into typed events."""
