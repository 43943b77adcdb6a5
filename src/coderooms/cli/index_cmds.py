"""``coderooms index`` and ``coderooms graph show``: build the code index, look into it.

Thin calls into :class:`coderooms.workspace.Workspace`. Text output is for people;
``--json`` prints one JSON document. Any refusal is one ``error:`` line and exit 1.
"""

from __future__ import annotations

import json
import os
from typing import Any

import click

from coderooms.cli.app import fail, json_option
from coderooms.cli.progress import PhaseProgress
from coderooms.errors import CoderoomsError
from coderooms.focus.graph import CodeEdge, CodeNode
from coderooms.index.errors import AmbiguousNode, UnknownNode
from coderooms.workspace import Workspace

__all__ = ["register", "index", "graph"]

CANDIDATES_SHOWN = 5  # how many ids an ambiguous name lists


def register(group: click.Group) -> None:
    """Attach ``index`` and the ``graph`` group to ``group``."""
    group.add_command(index)
    group.add_command(graph)


@click.command()
@click.argument("path", default=".", type=click.Path(file_okay=True, dir_okay=True))
@json_option("Print the summary as JSON (no progress bar).")
def index(path: str, as_json: bool) -> None:
    """Build or update the code index of PATH (default: the current directory).

    Parses every tracked source file (respecting .gitignore), resolves imports, calls,
    references, inheritance and tests into a graph, reads git history once, and stores
    it all in PATH/.coderooms/index.db. Re-running parses only files that changed.
    Then prepares focus: the term counts and embeddings of new or changed code are kept
    in PATH/.coderooms/focus.npz, so the next focus starts from them.
    """
    try:
        ws = Workspace.open(path)
        if not as_json:
            ws.report = PhaseProgress()
        # The engine follows: a cold run makes its documents and embeddings on the
        # workers while they parse and resolve, not on this process alone afterwards.
        summary = ws.index(prepare_focus=True)
        ws.focus_engine()  # counts and embeds what changed, kept for the next focus
    except CoderoomsError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(summary.to_json(), indent=2))
    else:
        for line in summary.lines():
            click.echo(line)


@click.group()
def graph() -> None:
    """Look into the code graph built by `coderooms index`."""


def _resolve_node(ws: Workspace, ref: str) -> CodeNode:
    """An exact id, else a unique symbol whose qualified or bare name is ``ref``."""
    g = ws.graph()
    exact = g.node(ref)
    if exact is not None:
        return exact
    for attr in ("qualname", "name"):
        found = sorted(
            (n for n in g.nodes if n.kind != "file" and getattr(n, attr) == ref), key=lambda n: n.id
        )
        if len(found) == 1:
            return found[0]
        if found:
            shown = ", ".join(n.id for n in found[:CANDIDATES_SHOWN])
            more = (
                f" and {len(found) - CANDIDATES_SHOWN} more"
                if len(found) > CANDIDATES_SHOWN
                else ""
            )
            raise AmbiguousNode(ref, shown + more)
    raise UnknownNode(ref)


def _node_json(node: CodeNode) -> dict[str, Any]:
    return {
        "id": node.id,
        "kind": node.kind,
        "path": node.path,
        "name": node.name,
        "qualname": node.qualname,
        "language": node.language,
        "start_line": node.start_line,
        "end_line": node.end_line,
        "signature": node.signature,
        "docstring": node.docstring,
        "parent": node.parent,
        "is_test": node.is_test,
        "is_generated": node.is_generated,
        "is_vendored": node.is_vendored,
    }


def _edge_json(edge: CodeEdge) -> dict[str, Any]:
    return {"src": edge.src, "dst": edge.dst, "kind": edge.kind, "weight": edge.weight}


@graph.command()
@click.argument("node")
@click.option(
    "--repo",
    "--path",
    "root",
    default=".",
    type=click.Path(),
    help="Repository root (default: .); --path is the same.",
)
@json_option("Print the node and its edges as JSON.")
def show(node: str, root: str, as_json: bool) -> None:
    """Show NODE (a file path, a symbol id like pkg/mod.py::Class.method, or a unique
    name) with its edges in and out."""
    try:
        ws = Workspace.open(root)
        if os.path.exists(ws.db_path):
            ws.refresh()  # never show a file or an edge that is no longer on disk
        found = _resolve_node(ws, ws.relative(node))
        edges = ws.edges_of(found.id)
    except CoderoomsError as err:
        fail(err)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "node": _node_json(found),
                    "out": [_edge_json(e) for e in edges.outgoing],
                    "in": [_edge_json(e) for e in edges.incoming],
                },
                indent=2,
            )
        )
        return
    n = edges.node
    click.echo(f"{n.id}  [{n.kind}, {n.language}] {n.path}:{n.start_line}-{n.end_line}")
    if n.signature:
        click.echo(f"  {n.signature}")
    if n.docstring:
        click.echo(f"  {n.docstring}")
    flags = [
        f
        for f, on in (
            ("test", n.is_test),
            ("generated", n.is_generated),
            ("vendored", n.is_vendored),
        )
        if on
    ]
    if flags:
        click.echo(f"  flags: {', '.join(flags)}")
    click.echo(f"out ({len(edges.outgoing)}):")
    for e in edges.outgoing:
        click.echo(f"  {e.kind:<10} -> {e.dst}" + (f"  x{e.weight:g}" if e.weight != 1.0 else ""))
    click.echo(f"in ({len(edges.incoming)}):")
    for e in edges.incoming:
        click.echo(f"  {e.kind:<10} <- {e.src}" + (f"  x{e.weight:g}" if e.weight != 1.0 else ""))
