"""The one time every command-line test posts at (see conftest.py)."""

from __future__ import annotations

from datetime import UTC, datetime

POSTED = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
"""The time every post in these tests is made at."""
POSTED_SHOWN = "2026-12-01 10:00:00 UTC"
"""How the readable text shows it."""
