"""One envelope for every retrieval answer: ``sufficiency``, ``salience_captured`` and a
uniform ``pruned: [{what, why}]``.

``seek``, ``impact`` and ``skim`` each say in their own terms what they left out (an
``ignored`` list, cut line runs). :func:`enveloped_seek`, :func:`enveloped_impact` and
:func:`enveloped_skim` add the same three fields to their wire forms, so a client reads
one shape whatever it asked; the fields are additive and the rest of the answer is left
as it is. Functions of wire-form data only: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["CAPTURED_DIGITS", "enveloped_impact", "enveloped_seek", "enveloped_skim", "pruned"]

CAPTURED_DIGITS = 4


def pruned(entries: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """``[{what, why}]`` of ignored entries (other keys dropped)."""
    return [{"what": str(e.get("what", "")), "why": str(e.get("why", ""))} for e in entries]


def enveloped_seek(data: dict[str, Any]) -> dict[str, Any]:
    """A seek answer (which judges its own sufficiency) with the envelope fields."""
    verdict = data["sufficiency"]
    return {
        **data,
        "salience_captured": verdict["captured_salience_mass"],
        "pruned": pruned(data.get("ignored", [])),
    }


def enveloped_impact(data: dict[str, Any]) -> dict[str, Any]:
    """An impact answer with the envelope: every dependent within the depth listed is
    ``saturated``; some left out (``ignored``) is ``gathering``, and
    ``salience_captured`` is the share listed (each dependent counts once). A target
    naming several symbols (listed as ``candidates``) is ``gathering`` with nothing
    captured."""
    listed = len(data.get("impacted", []))
    total_ignored = data.get("ignored_total", len(data.get("ignored", [])))
    total = listed + total_ignored
    captured = round(listed / total, CAPTURED_DIGITS) if total else 1.0
    if data.get("target", "") is None:
        named = len(data.get("candidates", [])) + total_ignored
        state, why = (
            "gathering",
            f"the target names {named} symbols (see candidates); ask again with one id",
        )
        captured = 0.0
    elif total_ignored == 0:
        state, why = "saturated", f"all {listed} dependents within depth {data['depth']} are listed"
    else:
        state, why = (
            "gathering",
            f"{total_ignored} dependents or links were left out (see pruned); a deeper or "
            "narrower target lists them",
        )
    verdict = {"state": state, "captured_salience_mass": captured, "why": why}
    return {
        **data,
        "sufficiency": verdict,
        "salience_captured": captured,
        "pruned": pruned(data.get("ignored", [])),
    }


def enveloped_skim(data: dict[str, Any]) -> dict[str, Any]:
    """A skim answer with the envelope: nothing cut is ``saturated``; lines cut only for
    not matching the goal is ``sufficient``; lines cut for budget is ``gathering``.
    ``salience_captured`` is the share of lines kept."""
    cuts = data.get("cuts", [])
    lines_in = int(data.get("lines_in", 0))
    captured = round(data.get("lines_kept", 0) / lines_in, CAPTURED_DIGITS) if lines_in else 1.0
    reasons = {c["reason"] for c in cuts}
    if not cuts:
        state, why = "saturated", "nothing was cut"
    elif "over_budget" in reasons:
        state, why = "gathering", "lines matching the goal were cut for budget; raise it"
    else:
        state, why = "sufficient", "every line cut is unrelated to the goal or overlong"
    return {
        **data,
        "sufficiency": {"state": state, "captured_salience_mass": captured, "why": why},
        "salience_captured": captured,
        "pruned": [
            {"what": f"lines {c['start_line']}-{c['end_line']}", "why": c["reason"]} for c in cuts
        ],
    }
