"""The focus engine's goal-independent work kept in .coderooms/focus.npz: a new process
starts from it and answers exactly as an engine built from nothing, also after an edit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from coderooms import embeddings, tokens, workspace
from coderooms.focus.runtime import FocusEngine
from coderooms.index import focus_state
from coderooms.workspace import Workspace

SHOP = {
    "shop/__init__.py": "",
    "shop/cart.py": (
        '"""A cart of items."""\n\n\nclass Cart:\n    def __init__(self):\n'
        "        self.items = []\n\n    def add_item(self, sku, quantity):\n"
        "        if quantity <= 0:\n            raise ValueError('quantity must be positive')\n"
        "        self.items.append((sku, quantity))\n"
    ),
    "shop/pricing.py": (
        "from shop.cart import Cart\n\n\ndef price_of(cart, discount=0):\n"
        "    return sum(q for _, q in cart.items) * (1 - discount)\n"
    ),
    "shop/shipping.py": "def route_parcel(weight):\n    return 'heavy' if weight > 10 else 'light'\n",
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\ndef test_add_item():\n    Cart().add_item('a', 1)\n"
    ),
    "README.md": "# Shop\n\nCarts, prices and parcels.\n",
}
GOALS = (
    "Cart.add_item with quantity 0 raises ValueError",
    "price_of gives wrong results after a discount",
    "route parcels by weight",
)


def _answers(engine: FocusEngine) -> list[str]:
    return [
        json.dumps([engine.focus(g, budget=400).to_json(), engine.seek(g).to_json()]) for g in GOALS
    ]


def _from_nothing(ws: Workspace) -> FocusEngine:
    return FocusEngine.from_reader(ws.graph(), ws, tokens.count_tokens, embeddings.embed)


def _state(root: Path) -> Path:
    return root / ".coderooms" / focus_state.STATE_FILE


def _built(root: Path) -> Path:
    return root / ".coderooms" / focus_state.BUILT_FILE


def _same_index(mine: FocusEngine, theirs: FocusEngine) -> None:
    assert mine.index.embeddings is not None and theirs.index.embeddings is not None
    assert mine.index.embeddings.dtype == theirs.index.embeddings.dtype
    assert np.array_equal(mine.index.embeddings, theirs.index.embeddings)
    for a, b in (
        (mine.index.file_bm25, theirs.index.file_bm25),
        (mine.index.symbol_bm25, theirs.index.symbol_bm25),
    ):
        words = sorted(set(a.documents.terms) | set(b.documents.terms))
        assert a.scores(words).tobytes() == b.scores(words).tobytes()
        for word in words:
            assert a.scores([word]).tobytes() == b.scores([word]).tobytes()


def _indexed(make_repo: Callable[..., Path]) -> tuple[Path, Workspace]:
    root = make_repo(SHOP)
    ws = Workspace.open(root)
    ws.index()
    return root, ws


def test_a_new_workspace_starts_from_the_kept_work_and_answers_as_one_from_nothing(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    assert ws.focus_engine().index.fresh_work > 0
    assert _state(root).is_file()
    again = Workspace.open(root).focus_engine()
    assert again.index.fresh_work == 0  # nothing tokenised or embedded again
    fresh = _from_nothing(ws)
    _same_index(again, fresh)
    assert _answers(again) == _answers(fresh)


def test_after_an_edit_only_the_edited_file_is_counted_and_embedded_again(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    first = ws.focus_engine().index.fresh_work
    with (root / "shop/shipping.py").open("a") as fh:
        fh.write("\n\ndef track_parcel(code):\n    return code.upper()\n")
    (root / "shop/returns.py").write_text("def refund(order):\n    return order.total\n")
    os.remove(root / "shop/pricing.py")
    later = Workspace.open(root)
    later.index()
    engine = later.focus_engine()
    assert 0 < engine.index.fresh_work < first
    fresh = _from_nothing(later)
    _same_index(engine, fresh)
    assert _answers(engine) == _answers(fresh)
    # ... and what it computed is kept: the next process computes nothing.
    assert Workspace.open(root).focus_engine().index.fresh_work == 0


def test_a_damaged_state_file_is_read_as_none_and_replaced(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    ws.focus_engine()
    _state(root).write_bytes(b"PK\x03\x04 not really a zip file")
    _built(root).write_bytes(b"coderooms-built\0\xff\xff\xff\xff\xff\xff\xff\x7f")
    engine = Workspace.open(root).focus_engine()
    assert engine.index.fresh_work > 0
    assert _answers(engine) == _answers(_from_nothing(ws))
    assert Workspace.open(root).focus_engine().index.fresh_work == 0


def test_a_state_made_with_another_model_or_code_is_not_used(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    ws.focus_engine()
    tag = ws._state_tag()
    assert focus_state.load(str(_state(root)), tag) is not None
    assert (
        focus_state.load(
            str(_state(root)), focus_state.state_tag("another model", tokens.encoding_name())
        )
        is None
    )
    assert focus_state.load(str(root / "missing.npz"), tag) is None


def test_token_counts_of_rendered_code_are_kept_for_the_next_process(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    first = ws.focus(GOALS[0], budget=400)
    assert (root / ".coderooms" / focus_state.TOKENS_FILE).is_file()
    engine = Workspace.open(root).focus_engine()
    assert engine.counter.counts  # read from disk, before any focus here
    again = engine.focus(GOALS[0], budget=400)
    assert engine.counter.added == 0  # every count came from there
    assert json.dumps(again.to_json()) == json.dumps(first.to_json())


def test_token_floors_are_kept_for_the_next_process(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "BOUNDED_CHUNK_CHARS", 8)  # every text past 8 characters
    root, ws = _indexed(make_repo)
    first = ws.focus(GOALS[0], budget=40)
    floors = {k: v for k, v in ws.focus_engine().counter.floors.items()}
    assert floors  # texts counted only until they passed a limit
    engine = Workspace.open(root).focus_engine()
    assert engine.counter.floors == {
        key: floor for key, floor in floors.items() if key not in engine.counter.counts
    }
    again = engine.focus(GOALS[0], budget=40)
    assert engine.counter.added == 0  # each count and each floor came from there
    assert json.dumps(again.to_json()) == json.dumps(first.to_json())


def test_floors_are_kept_beside_counts_and_a_file_without_them_has_none(tmp_path: Path) -> None:
    path = str(tmp_path / focus_state.TOKENS_FILE)
    counted, over, both = b"c" * 16, b"f" * 16, b"b" * 16
    focus_state.save_token_counts(path, {counted: 3, both: 9}, "tag", {over: 70, both: 8})
    assert focus_state.load_token_counts(path, "tag") == {counted: 3, both: 9}
    assert focus_state.load_token_floors(path, "tag") == {over: 70}  # counted whole: a count
    assert focus_state.load_token_floors(path, "another tag") == {}
    with open(path, "wb") as fh:  # as a coderooms that kept no floors wrote it
        np.savez(
            fh,
            tag=focus_state._bytes("tag"),
            keys=focus_state._key_array((counted,)),
            counts=np.asarray([3], dtype=np.int64),
        )
    assert focus_state.load_token_counts(path, "tag") == {counted: 3}
    assert focus_state.load_token_floors(path, "tag") == {}


def test_kept_keys_survive_trailing_zero_bytes(tmp_path: Path) -> None:
    keys = (b"\x01" * 15 + b"\x00", b"\x00" * 16)
    assert focus_state._keys(focus_state._key_array(keys)) == keys


def test_focus_in_a_fresh_process_prints_what_a_warm_workspace_answers(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    ws.focus_engine()
    warm = ws.focus(GOALS[0], budget=400)
    cli = [str(Path(sys.executable).parent / "coderooms"), "focus", GOALS[0], "--json"]
    printed = subprocess.run(
        [*cli, "--budget", "400", "--repo", str(root)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    assert json.loads(printed.stdout) == json.loads(json.dumps(warm.to_json()))
    assert printed.stderr == ""


def test_a_new_workspace_restores_the_built_index_and_answers_as_the_one_it_was_taken_from(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    warm = ws.focus_engine()
    assert _built(root).is_file()
    restored = Workspace.open(root).focus_engine()
    assert restored.index.fresh_work == 0
    # Every attribute the built index holds is set on the restored one: a new one added
    # to SalienceIndex without a place in BuiltIndex fails here.
    missing = set(vars(warm.index)) - set(vars(restored.index))
    assert missing <= {"file_documents", "symbol_documents"}  # lent on demand
    _same_index(restored, warm)
    assert _answers(restored) == _answers(warm) == _answers(_from_nothing(ws))


def test_a_damaged_or_foreign_built_index_is_not_used(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    expected = _answers(ws.focus_engine())
    tag = ws._state_tag()
    key = focus_state.built_key(tag, ws.generation())
    assert focus_state.load_built(str(_built(root)), key) is not None
    assert focus_state.load_built(str(_built(root)), focus_state.built_key(tag, "0")) is None
    whole = _built(root).read_bytes()
    _built(root).write_bytes(whole[: len(whole) // 2])
    assert focus_state.load_built(str(_built(root)), key) is None
    _built(root).write_bytes(b"not a built index")
    assert focus_state.load_built(str(_built(root)), key) is None
    engine = Workspace.open(root).focus_engine()  # from focus.npz: nothing computed
    assert engine.index.fresh_work == 0
    assert _answers(engine) == expected
    assert focus_state.load_built(str(_built(root)), key) is not None  # and kept again


def test_an_edit_after_a_restored_engine_reuses_the_work_it_was_built_from(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _indexed(make_repo)
    full = ws.focus_engine().index.fresh_work
    later = Workspace.open(root)
    later.focus(GOALS[0], budget=400)  # restored
    with (root / "shop/shipping.py").open("a") as fh:
        fh.write("\n\ndef track_parcel(code):\n    return code.upper()\n")
    later.focus(GOALS[0], budget=400)
    engine = later.focus_engine()
    assert 0 < engine.index.fresh_work < full
    assert engine.index.reused_keys > 0  # the keys of unchanged files, from the built file
    fresh = _from_nothing(later)
    assert engine.index.row_keys() == fresh.index.row_keys()
    _same_index(engine, fresh)
    assert _answers(engine) == _answers(fresh)


def test_a_long_lived_workspace_rewrites_focus_npz_only_past_its_bound(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, ws = _indexed(make_repo)
    ws.focus(GOALS[0], budget=400)
    before = ws.generation()
    kept = _state(root).stat().st_ino
    built = _built(root).stat().st_ino
    cache = (root / ".coderooms" / workspace.GRAPH_CACHE_FILE).stat().st_ino
    with (root / "shop/shipping.py").open("a") as fh:
        fh.write("\n\ndef track_parcel(code):\n    return code.upper()\n")
    after_edit = ws.focus(GOALS[2], budget=400).to_json()
    # The edit's work stays in memory: no state file is written again, only a delta that
    # names the files changed since the kept graph and built index.
    assert _state(root).stat().st_ino == kept
    assert _built(root).stat().st_ino == built
    assert (root / ".coderooms" / workspace.GRAPH_CACHE_FILE).stat().st_ino == cache
    delta = workspace._read_graph_delta(str(root / ".coderooms" / workspace.GRAPH_DELTA_FILE))
    assert delta is not None and delta.base == before and delta.after == ws.generation()
    assert "shop/shipping.py" in delta.paths
    tag = ws._state_tag()
    assert focus_state.load_built(str(_built(root)), focus_state.built_key(tag, before))
    fresh = Workspace.open(root)  # a new process patches the kept ones, answers the same ...
    engine = fresh.focus_engine()
    assert 0 < engine.index.fresh_work and engine.index.reused_keys > 0
    assert fresh.focus(GOALS[2], budget=400).to_json() == after_edit
    key = focus_state.built_key(tag, ws.generation())  # ... and keeps what it made
    assert focus_state.load_built(str(_built(root)), key) is not None
    assert Workspace.open(root).focus_engine().index.fresh_work == 0
    monkeypatch.setattr(workspace, "MAX_UNSAVED_WORK", 0)
    (root / "shop/returns.py").write_text("def refund(order):\n    return order.total\n")
    ws.focus(GOALS[0], budget=400)
    assert _state(root).stat().st_ino != kept
    _built(root).unlink()  # a new process then builds from focus.npz alone: nothing to do
    assert Workspace.open(root).focus_engine().index.fresh_work == 0


def test_a_whole_write_lands_at_once_and_a_failed_one_leaves_the_old_file(tmp_path: Path) -> None:
    from coderooms.datadir import replaced_whole

    path = tmp_path / "kept.bin"
    with replaced_whole(str(path)) as fh:
        fh.write(b"first")
    assert path.read_bytes() == b"first"
    with replaced_whole(str(path)) as fh:
        fh.write(b"half of the sec")
        raise OSError("disk full")  # not raised out: a lost write of a cache
    assert path.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["kept.bin"]  # no temporary file left


def test_a_whole_write_with_nowhere_to_go_is_dropped_and_a_raising_block_leaves_no_part(
    tmp_path: Path,
) -> None:
    from coderooms.datadir import replaced_whole

    gone = tmp_path / "no-such-folder" / "kept.bin"
    with replaced_whole(str(gone)) as fh:  # before: "generator didn't yield"
        fh.write(b"lost")
    assert not gone.parent.exists()
    path = tmp_path / "kept.bin"
    with pytest.raises(KeyError), replaced_whole(str(path)) as fh:
        fh.write(b"part")
        raise KeyError("a bug in the writer")
    assert list(tmp_path.iterdir()) == []  # neither the new file nor a part of it
