"""Where focus sessions keep their working sets: a small port, its tables and its SQL.

A working set (:class:`~coderooms.focus.workingset.WorkingSet`) belongs to one agent
session, an ``(agent, session)`` pair; a store keeps it so it outlives the process that
made it and is shared by every host opening the same store. ``focus_sessions`` holds one
row per session (budget, call count, pins, earlier goals, thrash streak) and
``focus_resident`` one row per resident node. :data:`WORKSET_TABLES` creates both; a
store appends them to its own migrations (SQLite: migration 8, PostgreSQL: 2).

Two hosts may update one session at once (a load, a focus call, a save each). A host
saves with :meth:`WorkingSets.save_if`, which writes only when the stored working set is
still the one it loaded, checked and written in one write transaction; otherwise it is
told so and loads again (:func:`coderooms.sessions.focus_call`), so neither update is lost.

Every save gives the session's row a fresh random ``stamp`` (:data:`WORKSET_STAMP`).
A store remembers the working sets it last read or wrote with their stamps
(:class:`KnownWorkingSets`), so a load whose stamp is unchanged, and a save over what it
last saw, read one short row instead of the whole working set; a stamp written by any
host, or a session deleted and made again, reads as changed. A whole working set is read
in one statement, so its session row and its residents are of one commit.
"""

from __future__ import annotations

import json
import operator
import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from coderooms.focus.workingset import Resident, WorkingSet
from coderooms.store.errors import CorruptDatabase

if TYPE_CHECKING:
    from coderooms.store.sql import SqlStore

__all__ = [
    "KNOWN_SESSIONS",
    "WORKSET_STAMP",
    "WORKSET_STAMP_POSTGRES",
    "WORKSET_TABLES",
    "KnownWorkingSets",
    "SqlWorkingSets",
    "WorkingSets",
]

_Query = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]
"""Runs one read statement and returns its rows."""

WORKSET_TABLES: tuple[str, ...] = (
    """CREATE TABLE focus_sessions (
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        budget INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        low_value_streak INTEGER NOT NULL,
        pinned_nodes TEXT NOT NULL,
        pinned_goals TEXT NOT NULL,
        goals TEXT NOT NULL,
        PRIMARY KEY (agent_id, session_id)
    )""",
    """CREATE TABLE focus_resident (
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        node_id TEXT NOT NULL,
        render TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        digest TEXT NOT NULL,
        loaded_by INTEGER NOT NULL,
        goal TEXT NOT NULL,
        accesses INTEGER NOT NULL,
        last_access INTEGER NOT NULL,
        grounded INTEGER NOT NULL,
        salience REAL NOT NULL,
        PRIMARY KEY (agent_id, session_id, node_id),
        FOREIGN KEY (agent_id, session_id) REFERENCES focus_sessions (agent_id, session_id)
            ON DELETE CASCADE
    )""",
)
"""The working-set tables, as SQLite (and standard SQL) writes them."""

_ADD_STAMP = (
    # A fresh random token per save of the session's working set (rows saved before
    # this step have none, ''): a host that holds the set it last read or wrote under
    # a stamp knows it is still what is stored while the stamp is.
    "ALTER TABLE focus_sessions ADD COLUMN stamp TEXT NOT NULL DEFAULT ''"
)
# A host still running the code from before the stamp (while others upgrade) updates a
# session's row without a new stamp: the database then clears the stamp, so no host
# takes the set it knew under the old one for what is stored.
WORKSET_STAMP: tuple[str, ...] = (
    _ADD_STAMP,
    """CREATE TRIGGER focus_sessions_stamp_kept AFTER UPDATE ON focus_sessions
    FOR EACH ROW WHEN NEW.stamp = OLD.stamp AND NEW.stamp <> ''
    BEGIN
        UPDATE focus_sessions SET stamp = ''
        WHERE agent_id = NEW.agent_id AND session_id = NEW.session_id;
    END""",
)
"""The step that adds the stamp (see the module docstring) to the session rows, as
SQLite writes it."""
WORKSET_STAMP_POSTGRES: tuple[str, ...] = (
    _ADD_STAMP,
    """CREATE FUNCTION focus_sessions_stamp_kept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.stamp = OLD.stamp THEN
            NEW.stamp := '';
        END IF;
        RETURN NEW;
    END $$""",
    "CREATE TRIGGER focus_sessions_stamp_kept BEFORE UPDATE ON focus_sessions "
    "FOR EACH ROW EXECUTE FUNCTION focus_sessions_stamp_kept()",
)
"""The same step as PostgreSQL writes it."""

STAMP_BYTES = 8  # random bytes of a stamp (as hex): two saves never share one
KNOWN_SESSIONS = 64  # working sets a store remembers with their stamps (recently used)

_SESSION_COLUMNS = "budget, calls, low_value_streak, pinned_nodes, pinned_goals, goals"
_RESIDENT_COLUMNS = (
    "node_id, render, tokens, digest, loaded_by, goal, accesses, last_access, grounded, salience"
)

_READ_WHOLE = (
    "SELECT "
    + ", ".join(f"s.{c}" for c in [*_SESSION_COLUMNS.split(", "), "stamp"])
    + ", "
    + ", ".join(f"r.{c}" for c in _RESIDENT_COLUMNS.split(", "))
    + " FROM focus_sessions s LEFT JOIN focus_resident r"
    " ON r.agent_id = s.agent_id AND r.session_id = s.session_id"
    " WHERE s.agent_id = ? AND s.session_id = ? ORDER BY r.node_id"
)
"""A session's row beside each of its residents (one row of NULLs when it has none):
one statement, so both are of one commit."""
_READ_STAMP = "SELECT stamp FROM focus_sessions WHERE agent_id = ? AND session_id = ?"
_HEAD_WIDTH = len(_SESSION_COLUMNS.split(", ")) + 1  # the session's columns and its stamp

_UPSERT_RESIDENT = (
    f"INSERT INTO focus_resident (agent_id, session_id, {_RESIDENT_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (agent_id, session_id, node_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _RESIDENT_COLUMNS.split(", ")[1:])
)


class WorkingSets(ABC):
    """The port focus hosts keep working sets through."""

    @abstractmethod
    async def load(self, agent: str, session: str) -> WorkingSet | None:
        """The session's working set, or None when it has none."""

    @abstractmethod
    async def save(self, ws: WorkingSet) -> None:
        """Replace the session's stored working set with ``ws``."""

    @abstractmethod
    async def save_if(self, ws: WorkingSet, expected: WorkingSet | None) -> bool:
        """Replace the session's stored working set with ``ws`` only when it is still
        ``expected`` (None: the session has none yet); whether ``ws`` was saved."""

    @abstractmethod
    async def delete(self, agent: str, session: str) -> bool:
        """Forget the session; whether there was one."""

    @abstractmethod
    async def of_agents(self, agents: Iterable[str]) -> list[WorkingSet]:
        """Every session working set of the ``agents``, by agent and session id."""


def _texts(value: Any, path: str, what: str) -> tuple[str, ...]:
    try:
        items = json.loads(value)
    except (TypeError, ValueError):
        items = None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise CorruptDatabase(path, f"a focus session's {what} is not a list of strings")
    return tuple(items)


def rows_to_working_set(
    agent: str,
    session: str,
    head: tuple[Any, ...],
    residents: list[tuple[Any, ...]],
    path: str,
) -> WorkingSet:
    """A working set from its session row and resident rows (as :data:`WORKSET_TABLES`
    lays them out)."""
    budget, calls, streak, pinned_nodes, pinned_goals, goals = head
    kept = []
    for row in residents:
        node_id, render, tokens, digest, loaded_by, goal, accesses, last, grounded, sal = row
        if render not in ("full", "skeleton"):
            raise CorruptDatabase(path, f"resident {node_id!r} has render {render!r}")
        kept.append(
            Resident(
                node_id,
                render,
                int(tokens),
                digest,
                int(loaded_by),
                goal,
                int(accesses),
                int(last),
                int(grounded),
                float(sal),
            )
        )
    return WorkingSet(
        agent,
        session,
        int(budget),
        int(calls),
        tuple(sorted(kept, key=lambda r: r.id)),
        _texts(pinned_nodes, path, "pinned nodes"),
        _texts(pinned_goals, path, "pinned goals"),
        _texts(goals, path, "goals"),
        int(streak),
    )


def working_set_rows(ws: WorkingSet) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """The session row and the resident rows of ``ws``."""
    head = (
        ws.agent,
        ws.session,
        ws.budget,
        ws.calls,
        ws.low_value_streak,
        json.dumps(list(ws.pinned_nodes)),
        json.dumps(list(ws.pinned_goals)),
        json.dumps(list(ws.goals)),
    )
    residents = [
        (
            ws.agent,
            ws.session,
            r.id,
            r.render,
            r.tokens,
            r.digest,
            r.loaded_by,
            r.goal,
            r.accesses,
            r.last_access,
            r.grounded,
            r.salience,
        )
        for r in ws.resident
    ]
    return head, residents


class KnownWorkingSets:
    """The working sets one store last read or wrote, by session, each with the stamp it
    was stored under: at most :data:`KNOWN_SESSIONS`, the one used longest ago
    forgotten first. Only what is known to have been stored under a stamp is kept."""

    def __init__(self) -> None:
        self._sets: dict[tuple[str, str], tuple[str, WorkingSet]] = {}

    def get(self, agent: str, session: str) -> tuple[str, WorkingSet] | None:
        known = self._sets.pop((agent, session), None)
        if known is not None:
            self._sets[(agent, session)] = known  # used now: the last to be forgotten
        return known

    def keep(self, stamp: str, ws: WorkingSet) -> None:
        key = (ws.agent, ws.session)
        self._sets.pop(key, None)
        if not stamp:  # stored before stamps: nothing to know it by
            return
        ids = [r.id for r in ws.resident]
        if any(map(operator.ge, ids, ids[1:])):  # not as a read gives it back (by id)
            return
        self._sets[key] = (stamp, ws)
        if len(self._sets) > KNOWN_SESSIONS:
            del self._sets[next(iter(self._sets))]

    def forget(self, agent: str, session: str) -> None:
        self._sets.pop((agent, session), None)

    def stamp_of(self, ws: WorkingSet) -> str | None:
        """The stamp ``ws`` is known stored under, if it is the one known for its
        session."""
        known = self._sets.get((ws.agent, ws.session))
        if known is None or not (known[1] is ws or known[1] == ws):
            return None
        return known[0]


class SqlWorkingSets(WorkingSets):
    """Working sets in a SQL store's tables (SQLite or PostgreSQL, through the shared
    ``?`` statements of :class:`~coderooms.store.sql.SqlStore`): reads on its reader
    connection, each save one write transaction; what the store last read or wrote is
    known by its stamp (see the module docstring)."""

    def __init__(self, store: SqlStore) -> None:
        self._store = store
        self._known = store._known_working_sets

    async def load(self, agent: str, session: str) -> WorkingSet | None:
        known = self._known.get(agent, session)
        if known is not None:
            rows = self._store._query(_READ_STAMP, (agent, session))
            if not rows:
                self._known.forget(agent, session)
                return None
            if rows[0][0] == known[0]:
                return known[1]
        found = self._read(self._store._query, agent, session)
        if found is None:
            self._known.forget(agent, session)
            return None
        self._known.keep(*found)
        return found[1]

    def _read(self, query: _Query, agent: str, session: str) -> tuple[str, WorkingSet] | None:
        rows = query(_READ_WHOLE, (agent, session))
        if not rows:
            return None
        head = rows[0][:_HEAD_WIDTH]
        residents = [row[_HEAD_WIDTH:] for row in rows if row[_HEAD_WIDTH] is not None]
        ws = rows_to_working_set(agent, session, head[:-1], residents, self._store.location)
        return head[-1], ws

    async def of_agents(self, agents: Iterable[str]) -> list[WorkingSet]:
        wanted = sorted(set(agents))
        if not wanted:
            return []
        marks = ", ".join("?" * len(wanted))
        keys = self._store._query(
            f"SELECT agent_id, session_id FROM focus_sessions WHERE agent_id IN ({marks}) "
            "ORDER BY agent_id, session_id",
            tuple(wanted),
        )
        found = [await self.load(agent, session) for agent, session in keys]
        return [ws for ws in found if ws is not None]

    async def save(self, ws: WorkingSet) -> None:
        stamp = _new_stamp()
        await self._store._writing(lambda db: _write(db, ws, stamp))
        self._known.keep(stamp, ws)

    async def save_if(self, ws: WorkingSet, expected: WorkingSet | None) -> bool:
        stamp = _new_stamp()
        # The stamp ``expected`` was stored under, when this store knows it: then its
        # row's stamp alone says whether it is still what is stored.
        expected_stamp = None if expected is None else self._known.stamp_of(expected)

        def write(db: Any) -> bool:
            # every writer of the store is serialized (SQLite's write lock, PostgreSQL's
            # write lock): what is read here cannot change before the write commits
            def rows(sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
                return list(db.execute(sql, params).fetchall())

            if expected is None:
                if rows(_READ_STAMP, (ws.agent, ws.session)):
                    return False
            elif expected_stamp is not None:
                if rows(_READ_STAMP, (ws.agent, ws.session)) != [(expected_stamp,)]:
                    return False
            else:
                stored = self._read(rows, ws.agent, ws.session)
                if stored is None or stored[1] != expected:
                    return False
            _write(db, ws, stamp, expected)
            return True

        saved: bool = await self._store._writing(write)
        if saved:
            self._known.keep(stamp, ws)
        return saved

    async def delete(self, agent: str, session: str) -> bool:
        def write(db: Any) -> bool:
            db.execute(
                "DELETE FROM focus_resident WHERE agent_id = ? AND session_id = ?",
                (agent, session),
            )
            gone = db.execute(
                "DELETE FROM focus_sessions WHERE agent_id = ? AND session_id = ?",
                (agent, session),
            )
            return gone.rowcount > 0

        self._known.forget(agent, session)
        return await self._store._writing(write)


def _new_stamp() -> str:
    return secrets.token_hex(STAMP_BYTES)


def _write(db: Any, ws: WorkingSet, stamp: str, stored: WorkingSet | None = None) -> None:
    """Replace the session's rows with ``ws`` under ``stamp`` (inside a write
    transaction). ``stored``, when given, is what the store holds for the session now
    (checked in this transaction): then only the resident rows that differ are written.
    A focus call changes a few of a session's residents and keeps the rest as they were;
    rewriting them all cost more than the call's other work with the store (0.73 ms of a
    save with 58 residents)."""
    head, residents = working_set_rows(ws)
    db.execute(
        f"INSERT INTO focus_sessions (agent_id, session_id, {_SESSION_COLUMNS}, stamp) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, session_id) DO UPDATE "
        "SET budget = excluded.budget, calls = excluded.calls, "
        "low_value_streak = excluded.low_value_streak, "
        "pinned_nodes = excluded.pinned_nodes, pinned_goals = excluded.pinned_goals, "
        "goals = excluded.goals, stamp = excluded.stamp",
        (*head, stamp),
    )
    if stored is None:
        db.execute(
            "DELETE FROM focus_resident WHERE agent_id = ? AND session_id = ?",
            (ws.agent, ws.session),
        )
        before: dict[str, tuple[Any, ...]] = {}
    else:
        before = {row[2]: row for row in working_set_rows(stored)[1]}
        kept = {row[2] for row in residents}
        for node_id in sorted(before.keys() - kept):
            db.execute(
                "DELETE FROM focus_resident WHERE agent_id = ? AND session_id = ? AND node_id = ?",
                (ws.agent, ws.session, node_id),
            )
    for resident in residents:
        if before.get(resident[2]) == resident:
            continue  # stored as it is
        db.execute(_UPSERT_RESIDENT, resident)
