"""A host that froze its heap has what an edit builds frozen too; one that did not, not.
Each case runs in a process of its own: freezing is for the process's life."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE_TIMEOUT_S = 60
PROBE = """
import gc, sys
from coderooms import heap
from coderooms.workspace import _without_cyclic_gc
if sys.argv[1] == "frozen":
    heap.freeze_kept_heap()
before = gc.get_freeze_count()
def counted():  # asked only here, never by the build (it walks the frozen heap)
    raise AssertionError("the frozen heap was counted")
real, gc.get_freeze_count = gc.get_freeze_count, counted
with _without_cyclic_gc():
    built = [[n] for n in range(50_000)]
gc.get_freeze_count = real
print(heap.heap_frozen(), gc.isenabled(), gc.get_freeze_count() - before >= len(built))
"""


@pytest.mark.parametrize(
    ("host", "said"), [("frozen", "True True True"), ("as-it-comes", "False True False")]
)
def test_what_is_built_without_cyclic_gc_is_frozen_only_in_a_frozen_host(
    host: str, said: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, host],
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT_S,
    )
    assert done.stdout.split() == said.split(), done.stderr
