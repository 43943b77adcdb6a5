"""Fixtures of the web UI tests: a served room, a signed-out and a signed-in client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from web_harness import Room, build_room, csrf_of  # noqa: F401

from coderooms.web import build_web_app
from coderooms.web.feed import ChangeFeed


@pytest.fixture
def room(tmp_path: Path) -> Iterator[Room]:
    built = build_room(tmp_path)
    yield built
    built.book.close()
    built.store.close()


@pytest.fixture
def anonymous(room: Room) -> Iterator[TestClient]:
    app = build_web_app(room.service, room.book, ChangeFeed(room.store, interval=0.01))
    with TestClient(app, base_url="http://127.0.0.1:8737") as client:
        yield client


@pytest.fixture
def client(room: Room, anonymous: TestClient) -> TestClient:
    response = anonymous.post(
        "/signin", data={"token": room.token, "next": "/"}, follow_redirects=False
    )
    assert response.status_code == 303
    return anonymous
