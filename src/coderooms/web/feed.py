"""What tells an open page that the room changed: the store's newest sequence, watched.

Every live page waits on one :class:`ChangeFeed`. Today it polls
``Store.last_sequence`` at most once per :data:`POLL_INTERVAL_S`, however many pages are
open (they share one answer); a store that can push (PostgreSQL's LISTEN/NOTIFY) can
replace :meth:`ChangeFeed.latest` without the pages noticing.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import anyio

from coderooms.store.base import Store

__all__ = ["HEARTBEAT_S", "POLL_INTERVAL_S", "STREAM_LIFETIME_S", "ChangeFeed"]

POLL_INTERVAL_S = 0.1
"""How stale the shared answer to "what is the newest sequence?" may be."""
HEARTBEAT_S = 15.0
"""How often an idle event stream sends a comment, so proxies keep it open."""
STREAM_LIFETIME_S = 300.0
"""How long one event stream lasts; the browser reconnects (EventSource does) after it."""


class ChangeFeed:
    """The newest sequence of a store, shared by every waiter."""

    def __init__(self, store: Store, interval: float = POLL_INTERVAL_S) -> None:
        self.store = store
        self.interval = interval
        self._value: int | None = None
        self._read_at = float("-inf")
        self._lock = anyio.Lock()
        self.closed = False  # set by close(): every stream ends at its next look

    def close(self) -> None:
        """End every stream within :data:`POLL_INTERVAL_S` (a server on its way out: an
        open page's stream would otherwise hold the stop until it is cut off). Safe from
        any thread."""
        self.closed = True

    async def latest(self) -> int | None:
        """The store's newest sequence, at most ``interval`` seconds old."""
        async with self._lock:
            now = time.monotonic()
            if now - self._read_at >= self.interval:
                self._value = await self.store.last_sequence()
                self._read_at = time.monotonic()
            return self._value

    async def changes(
        self, after: int | None, lifetime: float = STREAM_LIFETIME_S
    ) -> AsyncIterator[int | None]:
        """Each new newest sequence above ``after`` as it appears, and ``None`` every
        :data:`HEARTBEAT_S` without one; ends after ``lifetime`` seconds."""
        start = last_beat = time.monotonic()
        seen = after
        while not self.closed and time.monotonic() - start < lifetime:
            newest = await self.latest()
            if newest is not None and (seen is None or newest > seen):
                seen = newest
                last_beat = time.monotonic()
                yield newest
            elif time.monotonic() - last_beat >= HEARTBEAT_S:
                last_beat = time.monotonic()
                yield None
            await anyio.sleep(self.interval)
