"""Serving agents and people: ``coderooms mcp`` (stdio), ``coderooms up`` (HTTP),
``coderooms agent token ID`` and ``coderooms person token ID``.

``up`` is the one command a newcomer runs: it opens the embedded store, indexes the
repository it is started in (showing progress), serves MCP over streamable HTTP on
127.0.0.1 at ``/mcp`` and the web UI for people at ``/`` on the same port, and prints the
client configuration to paste.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import click

from coderooms.cli.app import Terminated, arm_stop_watchdog, run, store_of
from coderooms.cli.progress import PhaseProgress
from coderooms.heap import freeze_kept_heap
from coderooms.mcp.errors import NoAgentIdentity, PortInUse
from coderooms.rooms.dispatch import HOP_LIMIT, MentionDispatchPolicy
from coderooms.store import Store, UnknownAuthor

# The MCP SDK takes seconds to import on a busy machine: the commands below import it
# when they run, so the rest of the CLI stays quick.

__all__ = ["DEFAULT_PORT", "HOST", "MCP_PATH", "register"]

HOST = "127.0.0.1"
"""`up` listens on loopback only."""
DEFAULT_PORT = 8737
"""`up`'s port unless --port says otherwise (0 picks a free one)."""
MCP_PATH = "/mcp"
"""Where the streamable HTTP endpoint is mounted."""
AGENT_ENV = "CODEROOMS_AGENT"
"""Environment variable naming the stdio server's agent when --agent is not given."""
SERVER_KEY = "coderooms"
"""The name the printed client configuration gives this server."""
LISTEN_BACKLOG = 128
"""Pending connections the HTTP socket queues."""
GRACEFUL_SHUTDOWN_S = 5.0
"""On Ctrl-C or SIGTERM, how long `up` waits for open connections (an MCP client's event
stream stays open) before it cancels them and stops."""


def register(group: click.Group) -> None:
    """Attach ``mcp``, ``up``, ``agent token`` and ``person token`` to ``group``."""
    group.add_command(mcp_command)
    group.add_command(up_command)
    for name, command, help in (
        ("agent", agent_token, "Agents on the roster."),
        ("person", person_token, "People on the roster."),
    ):
        holder = group.commands.get(name)
        if not isinstance(holder, click.Group):
            holder = click.Group(name, help=help)
            group.add_command(holder)
        holder.add_command(command)


def _dispatch(hops: int) -> MentionDispatchPolicy:
    return MentionDispatchPolicy(enabled=hops > 0, max_hops=hops)


def _workspace_factory(repo: Path | None, echo: bool) -> Any:
    if repo is None:
        return None

    def open_workspace() -> Any:
        from coderooms.workspace import Workspace

        workspace = Workspace.open(repo)
        _index(workspace, echo)
        return workspace

    return open_workspace


def _indexed(repo: Path) -> bool:
    """Whether ``repo`` has an index already (a repository never indexed is indexed on
    the first focus call, not as soon as a server starts in it)."""
    from coderooms.index.discover import INDEX_DIR, INDEX_FILE

    return (repo / INDEX_DIR / INDEX_FILE).is_file()


def _index(workspace: Any, echo: bool) -> None:
    """Bring the workspace's index up to date; with ``echo``, progress and a summary on
    stderr, and the focus engine built before the first call."""
    if echo:
        click.echo(f"indexing {workspace.root} ...", err=True)
        workspace.report = PhaseProgress()
    # A focus engine follows either way: built here when echoing, else by the call that
    # opened the workspace (a stdio server's first focus). A cold run then makes its
    # documents and embeddings on the workers while they parse (see index.handover).
    summary = workspace.index(prepare_focus=True)
    if echo:
        for line in summary.lines():
            click.echo(f"  {line}", err=True)
        workspace.focus_engine()  # the first focus then answers at once


hops_option = click.option(
    "--dispatch-hops",
    type=click.IntRange(0, HOP_LIMIT),
    default=0,
    show_default=True,
    help="Offer mention dispatch in briefings, up to this many hops (0: never offered).",
)


@click.command("mcp")
@click.option(
    "--agent", "agent_id", envvar=AGENT_ENV, metavar="ID", help="Agent this server acts for."
)
@click.option(
    "--repo",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help=(
        "Repository for focus/seek/impact: indexed on the first such call, or, when it has"
        " an index already, opened as the server starts."
    ),
)
@hops_option
@click.pass_context
def mcp_command(ctx: click.Context, agent_id: str | None, repo: Path, dispatch_hops: int) -> None:
    """Serve MCP over stdio for one agent (--agent ID or $CODEROOMS_AGENT).

    The store must exist and the agent be on its roster (`coderooms init`, `coderooms
    agent add ID`): a server that cannot serve refuses before it starts, and creates
    nothing."""
    if not agent_id or not agent_id.strip():
        raise NoAgentIdentity()
    from coderooms.mcp.stdio import check_stdio

    check_stdio()  # first: opening the store would take a closed descriptor's number
    store = store_of(ctx, existing=True)
    run(_check_agent(store, agent_id))
    import anyio

    from coderooms.mcp.server import build_server, fixed_caller
    from coderooms.mcp.service import RoomService
    from coderooms.mcp.stdio import serve_stdio

    # one client per stdio server: focus runs on the loop (see RoomService)
    service = RoomService(
        store, _workspace_factory(repo, echo=False), _dispatch(dispatch_hops), offload=False
    )
    # an index to restore: have the engine ready for the first focus
    preparing = service.prepare_workspace() if _indexed(repo) else None
    server = build_server(service, fixed_caller(agent_id))
    stop = anyio.run(_serve_until_stopped, serve_stdio, server)
    if stop is None and preparing is not None:
        # The client hung up before the engine was ready: let that work end (and keep
        # what it made for the next server) rather than have the interpreter's exit
        # cut it off mid-call, which can abort the process or leave a half-started
        # index worker writing a traceback. A stop signal does not wait (see
        # arm_stop_watchdog).
        preparing.join()
    if stop == signal.SIGTERM:
        raise Terminated()
    if stop == signal.SIGINT:
        raise KeyboardInterrupt()


async def _serve_until_stopped(serve: Callable[[Any], Awaitable[None]], server: Any) -> int | None:
    """Serve until the client hangs up (None) or a stop signal comes (its number).

    A signal is taken on the loop, not raised wherever the main thread happens to be:
    serving is cancelled as a whole, so a stop that meets a closing input or a dozen
    tasks mid-call is one stop (then one line), not a group of failures."""
    import anyio
    import anyio.abc

    stopped: list[int] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as tasks:

        async def watch(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                task_status.started()
                async for signum in signals:  # until cancelled: a second signal is the same stop
                    if not stopped:
                        arm_stop_watchdog(signum)
                        stopped.append(signum)
                        tasks.cancel_scope.cancel()

        await tasks.start(watch)  # before serving: no signal goes unseen
        try:
            await serve(server)
        except Exception as exc:  # raised as itself below, not inside a group
            failed.append(exc)
        tasks.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return stopped[0] if stopped else None


async def _check_agent(store: Store, agent_id: str) -> None:
    """Refuse an agent that could not use the server, in the words every other command
    uses for it (a client would only see the connection close)."""
    roster = await store.roster()
    if roster.member(agent_id) is None:
        raise UnknownAuthor(f"agent {agent_id!r}")
    if roster.is_retired(agent_id):
        from coderooms.mcp.errors import RetiredCaller

        raise RetiredCaller(agent_id)  # it would serve it nothing, reads included


def _bind(port: int) -> socket.socket:
    # Named as TCP (proto 0 would do for the kernel): asyncio turns Nagle's algorithm off
    # only on sockets that say so, and with it on, an answer written in two pieces waited
    # for the client's delayed ACK, about 40 ms a call. Linux hands NODELAY on to every
    # accepted connection too.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError as err:
        sock.close()
        raise PortInUse(HOST, port, err.strerror or str(err)) from None
    sock.set_inheritable(True)
    return sock


def client_config(url: str, token: str) -> dict[str, Any]:
    """The ``mcpServers`` entry an MCP client needs to reach this server as one agent."""
    return {
        "mcpServers": {
            SERVER_KEY: {
                "type": "http",
                "url": url,
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }


@click.command("up")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port on 127.0.0.1 (0 picks a free one).",
)
@click.option(
    "--repo",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Repository to index and focus on.",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    metavar="ID",
    help="Issue a fresh token for this agent and print its ready-to-paste configuration "
    "(repeatable; replaces the agent's earlier token; an agent not on the roster is added).",
)
@hops_option
@click.pass_context
def up_command(
    ctx: click.Context, port: int, repo: Path, agents: tuple[str, ...], dispatch_hops: int
) -> None:
    """Open the store, index this repository, and serve MCP over HTTP on 127.0.0.1 (at
    /mcp), with the web UI for people at / on the same port."""
    import anyio
    import uvicorn

    from coderooms.mcp.httpwire import CoalescingHttpProtocol
    from coderooms.mcp.service import RoomService
    from coderooms.mcp.tokens import TokenBook
    from coderooms.workspace import Workspace

    store = store_of(ctx)
    book = TokenBook.for_store(store)
    ctx.call_on_close(book.close)
    # Everything that can refuse the start comes before anything that changes the
    # roster or the tokens: a start that fails (a taken port, a retired agent, an
    # interrupted index) leaves them as they were.
    for agent_id in agents:
        run(_check_enrolable(store, agent_id))
    sock = _bind(port)
    ctx.call_on_close(sock.close)
    bound = sock.getsockname()[1]
    base = f"http://{HOST}:{bound}"
    url = base + MCP_PATH

    click.echo(f"opening {repo.resolve()}", err=True)
    workspace = Workspace.open(repo)
    _index(workspace, echo=True)

    tokens: dict[str, str] = {}
    for agent_id in agents:
        run(_enrol(store, agent_id))
        tokens[agent_id] = book.issue(agent_id)

    service = RoomService(store, lambda: workspace, _dispatch(dispatch_hops))
    _, fast = http_mcp_app(service, book, store, base)
    from coderooms.mcp.bearer import bearer_only
    from coderooms.mcp.stopping import CutShortLog, answering_when_cut_short
    from coderooms.mcp.wirechecks import readable_refusals
    from coderooms.web import build_web_app, route_by_path
    from coderooms.web.feed import ChangeFeed

    feed = ChangeFeed(store)
    app = answering_when_cut_short(
        route_by_path(
            bearer_only(readable_refusals(fast, MCP_PATH)),
            build_web_app(service, book, feed),
            MCP_PATH,
        ),
        MCP_PATH,
    )

    def on_stop() -> None:  # open pages' streams end, waiting writes give up
        feed.close()
        store.stop_waiting()

    click.echo(f"coderooms is serving MCP at {url} (Ctrl-C to stop)")
    click.echo(
        f"web UI for people at {base}/ (sign in with a token from `coderooms person token ID`)"
    )
    if tokens:
        for agent_id, token in tokens.items():
            click.echo(f"\nClient configuration for @{agent_id} (paste into your MCP client):")
            click.echo(json.dumps(client_config(url, token), indent=2))
    else:
        click.echo("\nClient configuration (paste into your MCP client, one token per agent):")
        click.echo(json.dumps(client_config(url, "<TOKEN>"), indent=2))
        click.echo("Get a token with: coderooms agent token AGENT_ID")
    sys.stdout.flush()
    freeze_startup_heap()

    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        http=CoalescingHttpProtocol,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    logging.getLogger("uvicorn.error").addFilter(CutShortLog(GRACEFUL_SHUTDOWN_S))
    anyio.run(
        _quiet_stop_server(uvicorn.Server, on_stop)(config).serve,
        [sock],
        backend_options=event_loop_options(),
    )


def freeze_startup_heap() -> None:
    """Collect what starting up left behind, then keep the rest (the index, the focus
    engine, the imported modules: all of it kept for the server's life) out of every
    later garbage collection.

    A full collection walks every object the process holds. Under `up`'s HTTP load one
    ran every few thousand calls and stopped every agent for a fifth of a second to
    nearly half a second on a busy machine (measured: 190 and 426 ms, besides its CPU);
    with the startup heap frozen it walks only what serving has made since.
    Cyclic garbage among the frozen objects is not reclaimed; objects freed by their
    reference count still are, so the cost is what startup keeps anyway."""
    freeze_kept_heap()


def without_idle_tracing(server: Any) -> None:
    """Take the SDK's OpenTelemetry middleware off ``server`` when nothing traces: with
    no tracer provider set it opens a span that records nothing around every request,
    7% of a call's server CPU on `up`'s HTTP load (measured in process, 0.83 against
    0.77 ms a call). Tracing set up before the server starts (``opentelemetry-instrument
    coderooms up``, or a provider set in code) keeps its spans."""
    from opentelemetry import trace

    try:
        from mcp.server._otel import OpenTelemetryMiddleware
    except ImportError:  # an SDK that places it elsewhere: leave the chain as it is
        return
    if not isinstance(
        trace.get_tracer_provider(), trace.ProxyTracerProvider | trace.NoOpTracerProvider
    ):
        return
    chain = server._lowlevel_server.middleware
    chain[:] = [step for step in chain if not isinstance(step, OpenTelemetryMiddleware)]


def http_mcp_app(service: Any, book: Any, store: Store, base: str) -> tuple[Any, Any]:
    """The MCP server of ``up`` acting for the agent each bearer token (from ``book``)
    names, and its ASGI application for ``MCP_PATH`` at ``base`` (``http://host:port``):
    the SDK's, with calls on an open session taking the short way of
    :mod:`coderooms.mcp.fastpath` (its ``app`` is the SDK's own)."""
    from mcp.server.auth.settings import AuthSettings

    from coderooms.mcp.fastpath import with_fast_path
    from coderooms.mcp.server import build_server, token_caller
    from coderooms.mcp.tokens import AgentTokenVerifier, tokens_checked_first

    server = build_server(
        service,
        token_caller,
        token_verifier=AgentTokenVerifier(book, store),
        # Bearer tokens only, and no OAuth advertised: with no resource_server_url the SDK
        # publishes no protected-resource metadata naming an authorization server that
        # does not exist (issuer_url is required by the settings, and never published).
        auth=AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=None,
            validate_token_resource=False,
        ),
    )
    without_idle_tracing(server)
    # Each answer as one JSON body rather than a one-event SSE stream (the transport
    # allows either; no tool sends anything before its result): with 8 clients calling at
    # once, median latency 22 -> 14 ms and p99 89 -> 30 ms (benchmarks/reliability.py).
    sdk_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=HOST, json_response=True
    )
    verifier = AgentTokenVerifier(book, store)
    return server, with_fast_path(server, tokens_checked_first(sdk_app, verifier), path=MCP_PATH)


def event_loop_options() -> dict[str, bool]:
    """anyio's asyncio options for `up`: libuv's event loop (uvloop) where it is
    installed (a dependency everywhere but Windows, which it does not support); like the
    standard loop, it turns Nagle's algorithm off on every TCP connection, so a kept-open
    connection answers without waiting on the client's delayed ACK."""
    import importlib.util

    return {"use_uvloop": importlib.util.find_spec("uvloop") is not None}


def _quiet_stop_server(base: type[Any], stop_waiting: Callable[[], None]) -> type[Any]:
    """``uvicorn.Server`` whose stop on SIGINT/SIGTERM is the end of the command.

    uvicorn shuts down gracefully on either signal, then raises the signal again so
    the default action follows (a KeyboardInterrupt, or death by SIGTERM). For ``up``
    a requested stop is a success: after the graceful shutdown it returns normally.
    The first stop also calls ``stop_waiting`` (ending open pages' event streams, and
    the store's waits: a write waiting for another writer's lock answers at once), so
    neither holds the stop up."""
    from coderooms.mcp.stopping import stop_waiting_soon

    class QuietStopServer(base):  # type: ignore[misc, valid-type]
        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.should_exit:
                stop_waiting_soon(stop_waiting)
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            stops = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return QuietStopServer


async def _check_enrolable(store: Any, agent_id: str) -> None:
    """Refuse, without changing anything, an agent ``up`` could not enrol (a retired
    one); an agent not on the roster yet is fine (``_enrol`` adds it)."""
    from coderooms.mcp.errors import UnknownCaller
    from coderooms.mcp.tokens import check_token_holder

    try:
        await check_token_holder(store, agent_id)
    except UnknownCaller:
        pass


async def _enrol(store: Any, agent_id: str) -> None:
    """Make ``agent_id`` an active agent for ``up``: add it when it is not on the roster
    yet (so one command starts a fresh room); a retired agent stays refused."""
    from coderooms.mcp.errors import UnknownCaller
    from coderooms.mcp.tokens import check_token_holder

    try:
        await check_token_holder(store, agent_id)
    except UnknownCaller:
        await store.add_agent(agent_id)
        click.echo(f"added agent @{agent_id} to the roster", err=True)


@click.command("token")
@click.argument("agent_id", metavar="ID")
@click.pass_context
def agent_token(ctx: click.Context, agent_id: str) -> None:
    """Issue a bearer token for agent ID for the HTTP server (replaces its earlier one).

    The token is printed once; only its hash is kept.
    """
    from coderooms.mcp.tokens import TokenBook, check_token_holder

    store = store_of(ctx, existing=True)
    run(check_token_holder(store, agent_id))
    book = TokenBook.for_store(store)
    try:
        click.echo(book.issue(agent_id))
    finally:
        book.close()


@click.command("token")
@click.argument("person_id", metavar="ID")
@click.pass_context
def person_token(ctx: click.Context, person_id: str) -> None:
    """Issue a web sign-in token for person ID (replaces their earlier one).

    Sign in at the address `coderooms up` prints. The token is printed once; only its
    hash is kept.
    """
    from coderooms.mcp.tokens import TokenBook

    store = store_of(ctx, existing=True)
    roster = run(store.roster())
    if not roster.holds("person", person_id):
        raise UnknownAuthor(f"person {person_id!r}")
    book = TokenBook.for_store(store)
    try:
        click.echo(book.issue_person(person_id))
    finally:
        book.close()
