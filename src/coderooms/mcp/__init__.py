"""The MCP surface: rooms, recall and focus as tools for agents.

- ``coderooms mcp --agent ID`` serves one agent over stdio (``CODEROOMS_AGENT`` also
  names it); ``coderooms up`` opens the embedded store, indexes the repository, and
  serves every agent over streamable HTTP on 127.0.0.1, each with a bearer token from
  ``coderooms agent token ID``.
- :mod:`.service` checks who may do what (an active agent, a member of the desk it
  names) and calls the library; :mod:`.server` turns it into tools with typed schemas;
  :mod:`.render` and :mod:`.framing` write the readable text, with every piece of
  participant text framed as data; :mod:`.tail` keeps each conversation's newest rows
  in memory between calls; :mod:`.tokens` keeps the agents' tokens, hashed.
- Over HTTP, :mod:`.fastpath` answers the calls of an open session without the SDK's
  transport machinery (same checks, same handlers, same bytes), :mod:`.httpwire` sends
  each answer in one write, and :mod:`.bearer` says how to authenticate.
"""
