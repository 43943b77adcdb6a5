"""The pin grammar, the board fold and the bounded pinboard read."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_fakes import CountingLog, fed_in_batches

from coderooms.errors import InvalidBound, PageNotDescending
from coderooms.rooms.context import Pin
from coderooms.rooms.masking import code_ranges
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.pins import (
    PIN_EXCERPT_CHARS,
    PIN_LIMIT,
    PIN_MARKER_CAP,
    PIN_SCAN,
    PinBoardFold,
    PinDirective,
    fold_pins,
    parse_pin_directives,
    read_pinboard,
)
from coderooms.rooms.records import Agent, Conversation, LogMessage, Person
from coderooms.rooms.wire import from_wire, to_wire

ADA = Agent("ada", "Ada")
BOB = Person("bob", "Bob")
ENG = Conversation("eng", "Engineering")


def msg(
    sequence: int,
    content: str,
    author: Agent | Person = ADA,
    chat_id: str = "eng",
    parent: int | None = None,
) -> LogMessage:
    return LogMessage(sequence, author, content, chat_id=chat_id, parent=parent)


def directives(content: str, sequence: int = 10) -> list[PinDirective]:
    return parse_pin_directives(msg(sequence, content))


def test_constants() -> None:
    assert (PIN_LIMIT, PIN_SCAN, PIN_EXCERPT_CHARS, PIN_MARKER_CAP) == (12, 2048, 120, 8)


# --- grammar -------------------------------------------------------------------------------


def test_bare_pin_pins_its_own_row() -> None:
    assert directives("We settled on SQLite.\n!pin") == [PinDirective(10, 10, ADA, "pin")]


def test_pin_with_target_label_and_note() -> None:
    [d] = directives("  !pin ^42 #decision   the  store is SQLite ")
    assert d == PinDirective(10, 42, ADA, "pin", "decision", "the store is SQLite")


def test_target_and_label_in_either_order_before_the_note() -> None:
    [d] = directives("!pin #limits ^7 keep it short")
    assert (d.target, d.label, d.note) == (7, "limits", "keep it short")


def test_target_and_label_after_a_note_word_belong_to_the_note() -> None:
    [d] = directives("!pin see ^7 #later")
    assert (d.target, d.label, d.note) == (10, None, "see ^7 #later")


def test_only_the_first_target_and_label_are_taken() -> None:
    [d] = directives("!pin ^1 #a ^2 #b")
    assert (d.target, d.label, d.note) == (1, "a", "^2 #b")


def test_malformed_targets_and_empty_labels_start_the_note() -> None:
    assert directives("!pin ^x")[0].note == "^x"
    assert directives("!pin ^")[0].target == 10
    assert directives("!pin # y")[0] == PinDirective(10, 10, ADA, "pin", None, "# y")
    assert directives("!pin ^-3")[0].target == 10
    assert directives("!pin ^١٢")[0].target == 10  # only ASCII digits
    assert directives(f"!pin ^{2**64}")[0].target == 10
    assert directives(f"!pin ^{2**64 - 1}")[0].target == 2**64 - 1


def test_unpin_needs_a_target() -> None:
    assert directives("!unpin ^5 stale") == [PinDirective(10, 5, ADA, "unpin", None, "stale")]
    assert directives("!unpin") == []
    assert directives("!unpin because") == []


def test_only_exact_command_words_count() -> None:
    assert directives("!pinned ^3") == []
    assert directives("!PIN ^3") == []
    assert directives("pin ^3") == []
    assert directives("see !pin ^3") == []
    assert directives("!") == []
    assert directives("! pin ^3")[0].target == 3  # the command is the first word after '!'


def test_markers_inside_code_are_not_read() -> None:
    fenced = "```\n!pin ^1\n```"
    indented = "para\n\n    !pin ^2\n"
    inline = "see `code\n!pin ^3\nmore` here"
    quoted = "`!pin ^4`"
    for content in (fenced, indented, inline, quoted):
        assert directives(content) == [], content
    assert [d.target for d in directives(fenced + "\n!pin ^5")] == [5]


def test_markers_are_capped_per_row_in_reading_order() -> None:
    content = "\n".join(f"!pin ^{i}" for i in range(1, 12))
    assert [d.target for d in directives(content)] == list(range(1, PIN_MARKER_CAP + 1))


def test_crlf_lines_and_unicode_whitespace() -> None:
    assert [d.target for d in directives("x\r\n!pin ^3\r\n\u00a0!unpin ^4")] == [3, 4]


def test_pin_directive_wire_form() -> None:
    d = PinDirective(10, 4, BOB, "unpin", None, "done")
    wire = {
        "sequence": 10,
        "target": 4,
        "author": {"type": "person", "id": "bob", "label": "Bob"},
        "action": "unpin",
        "label": None,
        "note": "done",
    }
    assert to_wire(d) == wire
    assert from_wire(PinDirective, wire) == d
    from coderooms.errors import WireError

    with pytest.raises(WireError):
        from_wire(PinDirective, {**wire, "action": "toggle"})


def test_pin_wire_form() -> None:
    pin = Pin(4, 10, ADA, "decision", None, "We use SQLite")
    wire = {
        "sequence": 4,
        "pinned_at": 10,
        "pinned_by": {"type": "agent", "id": "ada", "label": "Ada"},
        "label": "decision",
        "note": None,
        "excerpt": "We use SQLite",
    }
    assert to_wire(pin) == wire
    assert from_wire(Pin, wire) == pin


_marker_text = st.text(alphabet=st.sampled_from(list("!pinu^#12 \n\t`~ab")), max_size=80)


@given(_marker_text)
def test_grammar_never_raises_and_never_reads_inside_code(content: str) -> None:
    row = msg(5, content)
    found = parse_pin_directives(row)
    assert len(found) <= PIN_MARKER_CAP
    ranges = code_ranges(content)
    line_starts = [0] + [i + 1 for i, ch in enumerate(content) if ch == "\n"]
    marker_lines = []
    for start in line_starts:
        end = content.find("\n", start)
        line = content[start : end if end >= 0 else len(content)]
        first = start + len(line) - len(line.lstrip())
        if any(lo <= first < hi or lo <= start < hi for lo, hi in ranges):
            continue
        marker_lines.append(line.strip())
    assert len(found) <= len([line for line in marker_lines if line.startswith("!")])
    for d in found:
        assert d.sequence == 5 and d.author == ADA


# --- fold ----------------------------------------------------------------------------------


def test_fold_orders_most_recently_pinned_first_with_excerpts() -> None:
    rows = [
        msg(1, "The budget is   600 chars."),
        msg(2, "!pin ^1 #budget"),
        msg(3, "A second insight\n!pin"),
    ]
    assert fold_pins(rows, PIN_LIMIT) == [
        Pin(3, 3, ADA, None, None, "A second insight !pin"),
        Pin(1, 2, ADA, "budget", None, "The budget is 600 chars."),
    ]


def test_repinning_updates_instead_of_duplicating() -> None:
    rows = [msg(1, "fact"), msg(2, "!pin ^1 #old"), msg(3, "!pin ^9"), msg(4, "!pin ^1 again", BOB)]
    board = fold_pins(rows, PIN_LIMIT)
    assert [p.sequence for p in board] == [1, 9]
    assert board[0] == Pin(1, 4, BOB, None, "again", "fact")


def test_unpin_removes_whoever_pinned() -> None:
    rows = [msg(1, "fact"), msg(2, "!pin ^1"), msg(3, "!unpin ^1", BOB)]
    assert fold_pins(rows, PIN_LIMIT) == []


def test_unpin_of_an_unpinned_row_is_harmless() -> None:
    assert fold_pins([msg(1, "!unpin ^7")], PIN_LIMIT) == []


def test_later_lines_of_one_row_win() -> None:
    assert fold_pins([msg(1, "!unpin ^1\n!pin")], PIN_LIMIT)[0].sequence == 1
    assert fold_pins([msg(1, "!pin\n!unpin ^1")], PIN_LIMIT) == []


def test_a_full_board_drops_the_least_recently_pinned() -> None:
    rows = [msg(i, f"insight {i}\n!pin") for i in range(1, 16)]
    board = fold_pins(rows, PIN_LIMIT)
    assert [p.sequence for p in board] == list(range(15, 3, -1))
    assert [p.sequence for p in fold_pins(rows, 2)] == [15, 14]
    assert fold_pins(rows, 0) == []
    with pytest.raises(InvalidBound):
        fold_pins(rows, -1)


def test_excerpt_is_none_when_the_row_is_unseen_or_blank() -> None:
    rows = [msg(1, "   "), msg(2, "!pin ^1\n!pin ^500")]
    board = fold_pins(rows, PIN_LIMIT)
    assert [(p.sequence, p.excerpt) for p in board] == [(500, None), (1, None)]


def test_excerpt_is_cut_at_pin_excerpt_chars() -> None:
    long = "x" * 200
    [pin] = fold_pins([msg(1, long), msg(2, "!pin ^1")], PIN_LIMIT)
    assert pin.excerpt == "x" * PIN_EXCERPT_CHARS + "…"


_rows = st.lists(
    st.tuples(
        st.sampled_from(["!pin", "!pin ^1", "!pin ^2 #x", "!unpin ^1", "!unpin ^2", "text"]),
        st.sampled_from([ADA, BOB]),
    ),
    max_size=20,
)


@given(_rows)
def test_folding_twice_gives_the_same_board(spec: list[tuple[str, Agent | Person]]) -> None:
    rows = [msg(i + 1, content, author) for i, (content, author) in enumerate(spec)]
    assert fold_pins(rows, PIN_LIMIT) == fold_pins(list(rows), PIN_LIMIT)
    assert fold_pins(rows, PIN_LIMIT) == fold_pins(rows + [], PIN_LIMIT)


@given(_rows, st.integers(min_value=1, max_value=30), st.sampled_from([ADA, BOB]))
def test_an_unpin_after_a_pin_empties_it(
    spec: list[tuple[str, Agent | Person]], target: int, who: Agent | Person
) -> None:
    rows = [msg(i + 1, content, author) for i, (content, author) in enumerate(spec)]
    n = len(rows)
    rows += [msg(n + 1, f"!pin ^{target}"), msg(n + 2, f"!unpin ^{target}", who)]
    assert target not in [p.sequence for p in fold_pins(rows, PIN_LIMIT)]


# --- read ----------------------------------------------------------------------------------


def _desk_log() -> MemoryLog:
    log = MemoryLog()
    log.add(ADA, "root decision: ship friday", chat_id="eng")  # 1
    log.add(BOB, "buried reply that matters", chat_id="eng", parent=1)  # 2
    log.add(BOB, "!pin ^2 #buried", chat_id="eng", parent=1)  # 3
    log.add(ADA, "other desk fact\n!pin", chat_id="ops")  # 4
    log.add(ADA, "top level insight\n!pin", chat_id="Engineering")  # 5
    log.add(ADA, "other thread\n!pin", chat_id="eng")  # 6
    log.add(ADA, "reply elsewhere\n!pin ^1", chat_id="eng", parent=6)  # 7
    return log


async def test_desk_board_folds_the_whole_interior() -> None:
    board = await read_pinboard(_desk_log(), ENG)
    assert [(p.sequence, p.pinned_at) for p in board] == [(1, 7), (6, 6), (5, 5), (2, 3)]
    assert board[-1].excerpt == "buried reply that matters"


async def test_thread_board_reads_root_and_direct_replies() -> None:
    board = await read_pinboard(_desk_log(), Conversation("eng", "Engineering", 1))
    assert [(p.sequence, p.label) for p in board] == [(2, "buried")]
    other = await read_pinboard(_desk_log(), Conversation("eng", "Engineering", 6))
    assert [p.sequence for p in other] == [1, 6]
    assert other[0].excerpt is None  # row 1 is not in that thread


async def test_before_is_exclusive_and_limit_zero_reads_nothing() -> None:
    log = CountingLog(_desk_log())
    assert [p.sequence for p in await read_pinboard(log, ENG, before=6)] == [5, 2]
    log.requests.clear()
    assert await read_pinboard(log, ENG, 0) == []
    assert log.requests == []
    assert len(await read_pinboard(log, ENG, 2)) == 2


async def test_pin_scan_bounds_the_read() -> None:
    log = MemoryLog([msg(1, "!pin #too-old")])
    for sequence in range(2, PIN_SCAN + 2):
        log.append(msg(sequence, "chatter"))
    counting = CountingLog(log)
    assert await read_pinboard(counting, ENG) == []
    assert sum(limit for _, limit in counting.requests) == PIN_SCAN


async def test_a_pin_two_thousand_rows_back_is_on_the_board() -> None:
    log = MemoryLog([msg(1, "the constraint: never drop rows")])
    log.append(msg(2, "!pin ^1 #constraint"))
    for sequence in range(3, 2003):
        log.append(msg(sequence, f"chatter {sequence}"))
    [pin] = await read_pinboard(log, ENG)
    assert pin == Pin(1, 2, ADA, "constraint", None, "the constraint: never drop rows")


# --- code nodes ----------------------------------------------------------------------------


def test_a_pin_can_name_a_code_node_before_its_label_and_note() -> None:
    [d] = directives("!pin @src/app.py::Session.send #hot keep it small")
    assert d == PinDirective(10, 10, ADA, "pin", "hot", "keep it small", "src/app.py::Session.send")
    assert directives("!unpin @src/app.py")[0].node == "src/app.py"


@pytest.mark.parametrize(
    "line", ["!pin @alice thanks", "!pin @ everyone", "!pin ^3 @a.py::f", "!pin note @a.py::f"]
)
def test_a_mention_or_a_late_at_word_is_not_a_node(line: str) -> None:
    [d] = directives(line)
    assert d.node is None


def test_node_pins_fold_by_node_and_unpin_by_node() -> None:
    rows = [
        msg(1, "!pin @a.py::f #one"),
        msg(2, "!pin @b.py::g"),
        msg(3, "!pin @a.py::f #again"),
        msg(4, "!unpin @b.py::g"),
        msg(5, "plain"),
        msg(6, "!pin ^5"),
    ]
    board = fold_pins(rows, PIN_LIMIT)
    assert [(p.sequence, p.node, p.label) for p in board] == [
        (5, None, None),
        (3, "a.py::f", "again"),
    ]
    node_pin = board[1]
    assert node_pin.pinned_at == 3 and node_pin.excerpt is None
    assert from_wire(Pin, to_wire(node_pin)) == node_pin
    assert "node" not in to_wire(board[0])  # a message pin's wire form is unchanged


# --- kept up to date row by row ---------------------------------------------------------

_fold_rows = st.lists(
    st.tuples(
        st.sampled_from(
            ["!pin", "!pin ^2 #x", "!pin ^5", "!unpin ^2", "!pin @a.py::f", "!unpin @a.py::f"]
            + ["text", "x" * 130, "   "]
        ),
        st.sampled_from(["eng", "Engineering", "ops"]),
        st.integers(min_value=1, max_value=3),
    ),
    max_size=50,
)


@settings(max_examples=200, deadline=None)
@given(_fold_rows, st.integers(min_value=1, max_value=20), st.data())
def test_a_board_fold_fed_in_batches_pins_what_folding_its_scan_pins(
    spec: list[tuple[str, str, int]], scan: int, data: st.DataObject
) -> None:
    rows: list[LogMessage] = []
    sequence = 0
    for content, chat_id, gap in spec:
        sequence += gap
        rows.append(msg(sequence, content, chat_id=chat_id))
    fold = PinBoardFold(ENG, scan)
    for taken in fed_in_batches(fold.extend, rows, data):
        limit = data.draw(st.integers(min_value=0, max_value=PIN_LIMIT))
        in_scan = [r for r in rows[max(0, taken - scan) : taken] if r.chat_id != "ops"]
        assert fold.pins(limit) == fold_pins(in_scan, limit)


def test_a_board_fold_of_the_default_scan_equals_reading_the_board() -> None:
    log = MemoryLog()
    for n in range(PIN_SCAN + 300):
        content = f"!pin ^{n - 5} #n{n}" if n % 97 == 0 and n > 5 else f"note {n}"
        log.add(ADA, content, chat_id="eng" if n % 5 else "ops")
    fold = PinBoardFold(ENG)
    fold.extend(log.rows)
    assert fold.pins() == asyncio.run(read_pinboard(log, ENG))
    assert fold.pins()  # the scan holds pins to compare


def test_a_board_fold_refuses_rows_out_of_order_and_a_thread() -> None:
    fold = PinBoardFold(ENG)
    fold.extend([msg(1, "!pin"), msg(3, "text")])
    with pytest.raises(PageNotDescending):
        fold.extend([msg(2, "late")])
    with pytest.raises(ValueError):
        PinBoardFold(Conversation("eng", "Engineering", 1))


def test_the_targets_a_post_is_checked_for_are_the_ones_the_fold_pins() -> None:
    # the check skipped every #word and took any ^N of the line: '!pin #a #b ^999' was
    # refused (the grammar reads a carrier pin with note '#b ^999'), and '!pin #a #b ^1'
    # was checked for #1 while it pinned the post itself
    from coderooms.rooms.pins import PIN_MARKER_CAP, named_pin_targets

    assert named_pin_targets("!pin #a #b ^999") == []
    assert named_pin_targets("!pin #a ^7 note ^9") == [("^7", 7)]
    assert named_pin_targets("!pin ^x") == [("^x", None)]
    assert named_pin_targets("!unpin the decision") == []
    past_cap = "\n".join(["!pin"] * PIN_MARKER_CAP + ["!pin ^999"])
    assert named_pin_targets(past_cap) == []  # a marker past the cap is not read
    for content in ("!pin #a #b ^1", "!pin #a ^7 note ^9", past_cap):
        row = LogMessage(50, Agent("a", "A"), content)
        targets = [d.target for d in parse_pin_directives(row) if d.target != row.sequence]
        assert targets == [n for _, n in named_pin_targets(content)]
