"""The ``coderooms`` command line (a surface: thin calls into the store and the core).

``main`` is the click group behind the console script; each command family registers
itself here.
"""

from coderooms.cli import focus_cmds, index_cmds, mcp_cmds, recall_cmds, rooms_cmds, skim_cmds
from coderooms.cli.app import accept_global_options, main

rooms_cmds.register(main)
recall_cmds.register(main)
mcp_cmds.register(main)
index_cmds.register(main)
focus_cmds.register(main)
skim_cmds.register(main)
accept_global_options(main)  # after every command is registered

__all__ = ["main"]
