"""Deterministic trajectory-audit engine (no Django, no network, no model weights)."""
