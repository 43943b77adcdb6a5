"""The web UI for people: desks, threads, pins, search, what an agent sees, and focus.

A surface over the same library functions the CLI and the MCP tools call; see
:mod:`coderooms.web.app`.
"""

from coderooms.web.app import build_web_app, route_by_path

__all__ = ["build_web_app", "route_by_path"]
