"""A served room for the web UI tests: a SQLite store with two agents, a desk, a person
with a sign-in token, and a small indexed repository for the focus view."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parent.parent / "mcp"))
from mcp_repo import write_fixture_repo  # noqa: E402  (the MCP tests' known repository)

from coderooms.mcp.service import RoomService  # noqa: E402
from coderooms.mcp.tokens import TokenBook
from coderooms.store import Store, open_store
from coderooms.web import build_web_app
from coderooms.web.app import CSRF_FIELD
from coderooms.web.feed import ChangeFeed
from coderooms.workspace import Workspace


@dataclass
class Room:
    db: str
    store: Store
    book: TokenBook
    service: RoomService
    token: str
    root: Path

    def post(self, author: str, content: str, desk: str = "General", parent: int | None = None):  # type: ignore[no-untyped-def]
        async def go():  # type: ignore[no-untyped-def]
            return await self.store.post(author, content, desk=desk, parent=parent)

        return asyncio.run(go())


def build_room(tmp_path: Path) -> Room:
    db = str(tmp_path / "rooms.db")
    store = open_store(db)

    async def setup() -> None:
        await store.add_agent("alice", "Alice")
        await store.add_agent("bob")
        await store.add_person("pat", "Pat")
        await store.create_desk("eng", "Engineering", "Building the shop")
        await store.add_desk_member("eng", "alice")

    asyncio.run(setup())
    book = TokenBook(db)
    token = book.issue_person("pat")
    root = write_fixture_repo(tmp_path / "repo")
    workspace = Workspace.open(root)
    workspace.index(progress=False)
    service = RoomService(store, lambda: workspace)
    return Room(db, store, book, service, token, root)


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


CSRF = re.compile(rf'name="{CSRF_FIELD}" value="([0-9a-f]+)"')


def csrf_of(html: str) -> str:
    found = CSRF.search(html)
    assert found, "the page has no CSRF field"
    return found.group(1)
