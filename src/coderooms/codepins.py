"""Code in the room: ``!pin @path/mod.py::Name`` pins a code node (a host layer).

The marker lives in the transcript like any pin (:mod:`coderooms.rooms.pins` folds it);
this module ties it to the code. When a host that has the repository indexed takes a
post carrying node pins, it checks that each node exists (refusing the post, before
anything is written, when one does not) and records what the node was: its content hash
and signature. A pinboard read then shows each pinned node's signature today and whether
it changed since it was pinned.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from coderooms.rooms.context import Pin
from coderooms.rooms.pins import parse_pin_directives
from coderooms.rooms.records import LogMessage, Operator
from coderooms.store.base import CodePinSnapshot, Store

__all__ = ["NodeState", "NodeLookup", "node_pins_in", "node_states", "snapshot_node_pins"]


class NodeLookup(Protocol):
    """The face of the workspace this module uses: a node by id (raising
    :class:`~coderooms.index.errors.UnknownNode` when there is none)."""

    def node(self, node_id: str) -> Any: ...


@dataclass(frozen=True, slots=True)
class NodeState:
    """A pinned node as the pinboard shows it: today's signature (None when the node is
    gone or the host has no index) and whether it changed since it was pinned (None when
    that is not known: pinned where no index was, or no index here)."""

    signature: str | None
    changed: bool | None
    gone: bool = False


def node_pins_in(content: str) -> list[str]:
    """The code nodes a message's ``!pin @node`` markers pin, in reading order."""
    row = LogMessage(sequence=0, author=Operator(), content=content)
    return [d.node for d in parse_pin_directives(row) if d.node is not None and d.action == "pin"]


def check_node_pins(content: str, lookup: NodeLookup) -> list[CodePinSnapshot]:
    """Each node the message pins, as it is now (sequence 0 until the row is written);
    :class:`~coderooms.index.errors.UnknownNode` for a node the index does not hold."""
    snapshots = []
    for node_id in dict.fromkeys(node_pins_in(content)):
        node = lookup.node(node_id)
        snapshots.append(CodePinSnapshot(0, node.id, node.content_hash, _signature(node)))
    return snapshots


async def snapshot_node_pins(
    store: Store, sequence: int, snapshots: Iterable[CodePinSnapshot]
) -> None:
    """Record what the nodes row ``sequence`` pins were when it was posted."""
    await store.record_code_pins(
        CodePinSnapshot(sequence, s.node, s.content_hash, s.signature) for s in snapshots
    )


async def node_states(
    store: Store, pins: Iterable[Pin], lookup: NodeLookup | None
) -> dict[tuple[int, str], NodeState]:
    """For each node pin of a board, keyed by (pinning row, node): its state today."""
    from coderooms.index.errors import UnknownNode

    wanted = [(p.sequence, p.node) for p in pins if p.node is not None]
    if not wanted:
        return {}
    recorded = {(s.sequence, s.node): s for s in await store.code_pins(q for q, _ in wanted)}
    states: dict[tuple[int, str], NodeState] = {}
    for sequence, node_id in wanted:
        then = recorded.get((sequence, node_id))
        if lookup is None:
            states[(sequence, node_id)] = NodeState(then.signature if then else None, None)
            continue
        try:
            node = lookup.node(node_id)
        except UnknownNode:
            states[(sequence, node_id)] = NodeState(None, then is not None or None, gone=True)
            continue
        changed = None if then is None else node.content_hash != then.content_hash
        states[(sequence, node_id)] = NodeState(_signature(node), changed)
    return states


def _signature(node: Any) -> str:
    return str(node.signature or node.qualname or node.id)
