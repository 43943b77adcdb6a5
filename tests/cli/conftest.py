"""Every command-line test posts at one fixed time, so outputs that show post times are
exact."""

from __future__ import annotations

import pytest
from cli_clock import POSTED

from coderooms.store import sqlite


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite, "utc_now", lambda: POSTED)
