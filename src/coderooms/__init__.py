"""coderooms — shared memory and context tools for agentic work.

The public surface (see ``shared/spec/API.md``) is importable from here.
"""

from coderooms.errors import *  # noqa: F403
from coderooms.rooms import *  # noqa: F403

__version__ = "0.1.0"
