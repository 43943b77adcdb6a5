"""Errors the MCP surface raises, all under :class:`~coderooms.errors.HostError`::

    HostError
    └── ServeError                     the MCP server refused a call or cannot start
        ├── NoAgentIdentity            stdio started without --agent / CODEROOMS_AGENT
        ├── UnknownCaller              the caller is not an agent on the roster
        ├── RetiredCaller              the caller has been retired
        ├── NotADeskMember             the caller does not belong to the desk it named
        ├── ThreadNotInDesk            a thread root that is not a row of the named desk
        ├── ArgumentOutOfRange         a numeric argument outside its allowed range
        ├── InvalidArguments           arguments that do not fit a tool's input schema
        ├── UnknownTool                a call naming a tool this server does not have
        ├── NoWorkspace                focus/seek/impact with no repository to serve
        ├── TokenStoreUnsupported      agent tokens need the embedded SQLite store
        ├── PortInUse                  `coderooms up` could not bind its port
        └── StdioClosed                `coderooms mcp` started with stdin or stdout closed

A refusal reaches the model as a tool error whose text is ``Type: message`` and whose
structured content is ``{"error": {"type": …, "message": …}}``, so a client can branch
on the type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.errors import HostError

if TYPE_CHECKING:
    from coderooms.rooms.roster import Roster

__all__ = [
    "ArgumentOutOfRange",
    "InvalidArguments",
    "NoAgentIdentity",
    "NoWorkspace",
    "NotADeskMember",
    "PortInUse",
    "RetiredCaller",
    "ServeError",
    "StdioClosed",
    "ThreadNotInDesk",
    "TokenStoreUnsupported",
    "UnknownCaller",
    "UnknownTool",
    "check_caller",
]


class ServeError(HostError):
    """The MCP server refused a call, or could not start."""


class NoAgentIdentity(ServeError):
    fields = ()

    def __init__(self) -> None:
        super().__init__(
            "no agent identity: pass --agent ID or set CODEROOMS_AGENT (over HTTP, send a "
            "bearer token from `coderooms agent token ID`)"
        )


class UnknownCaller(ServeError):
    fields = ("agent_id",)
    template = (
        "agent {agent_id!r} is not on the roster; add it with `coderooms agent add {agent_id}`"
    )


class RetiredCaller(ServeError):
    fields = ("agent_id",)
    template = "agent {agent_id!r} is retired and can no longer use the room"


def check_caller(roster: Roster, agent_id: str) -> None:
    """Refuse ``agent_id`` unless it is an active agent of ``roster``: the one check a
    tool call, a token's issue and a token's use all make."""
    if roster.member(agent_id) is None:
        raise UnknownCaller(agent_id)
    if roster.is_retired(agent_id):
        raise RetiredCaller(agent_id)


class NotADeskMember(ServeError):
    fields = ("agent_id", "desk_id")
    template = (
        "agent {agent_id!r} is not a member of desk {desk_id!r}, so it cannot read, search "
        "or post there; ask the operator to add it (`coderooms desk add {desk_id} {agent_id}`)"
    )


class ThreadNotInDesk(ServeError):
    fields = ("root", "desk_id")
    template = (
        "message {root} is not a message of desk {desk_id!r}, so it cannot open a thread there"
    )


class ArgumentOutOfRange(ServeError):
    fields = ("name", "value", "low", "high")
    template = "{name} must be between {low} and {high}, got {value}"


class InvalidArguments(ServeError):
    fields = ("tool", "problems")
    template = "the arguments of {tool} do not fit its input schema: {problems}"


class UnknownTool(ServeError):
    fields = ("tool", "tools")
    template = "there is no tool {tool!r}; this server has {tools}"


class NoWorkspace(ServeError):
    fields = ()

    def __init__(self) -> None:
        super().__init__(
            "this server has no repository to focus on; start it with --repo PATH "
            "(or run `coderooms up` inside the repository)"
        )


class TokenStoreUnsupported(ServeError):
    fields = ("url",)
    template = "agent tokens are kept in the embedded SQLite store; {url!r} is not one"


class PortInUse(ServeError):
    fields = ("host", "port", "reason")
    template = "cannot listen on {host}:{port} ({reason}); pick another with --port"


class StdioClosed(ServeError):
    fields = ("stream",)
    template = (
        "standard {stream} is closed: an MCP client talks to `coderooms mcp` through the "
        "server's stdin and stdout, so start it from the client (or with both open)"
    )


class StdioOutputFailed(ServeError):
    fields = ("reason",)
    template = (
        "writing to standard output failed ({reason}), so the server stopped; answers "
        "from then on were lost"
    )
