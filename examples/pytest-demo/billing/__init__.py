"""Tiny billing helpers used by the freezegate pytest demo."""
