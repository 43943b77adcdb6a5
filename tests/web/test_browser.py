"""The web UI in a real browser: Debian's chromium driven by Playwright against
`coderooms up` in a subprocess. Skipped, saying why, when chromium or Playwright is
missing (`.ci/run` installs both)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "mcp"))
from mcp_harness import serving_up  # noqa: E402
from mcp_repo import write_fixture_repo  # noqa: E402

CHROMIUM = os.environ.get("CODEROOMS_CHROMIUM", "/usr/bin/chromium")
"""Debian's chromium (Playwright's own browser download is not used)."""
UI_TIMEOUT_MS = 10_000
"""How long a step waits for the page (generous: the machine may be busy)."""

playwright_sync = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[dev]')"
)
if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
    pytest.skip(
        f"no chromium at {CHROMIUM} (apt-get install -y chromium; .ci/run does)",
        allow_module_level=True,
    )

BIN = Path(sys.executable).parent
CODEROOMS = str(BIN / "coderooms")


@dataclass
class Served:
    url: str
    db: str
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("browser")
    repo = write_fixture_repo(base / "repo")
    db = f"sqlite:///{base / 'rooms.db'}"

    # through the CLI: Playwright's sync API keeps an event loop running in this thread
    for command in (
        ["agent", "add", "alice"],
        ["person", "add", "pat", "--label", "Pat"],
        ["person", "add", "sam", "--label", "Sam"],
        ["desk", "create", "long"],
    ):
        subprocess.run([CODEROOMS, "--db", db, *command], check=True, capture_output=True)
    tokens = {
        person: subprocess.run(
            [CODEROOMS, "--db", db, "person", "token", person],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for person in ("pat", "sam")
    }
    with serving_up(db, repo, base) as process:
        assert process.stdout is not None
        url = None
        for _ in range(40):
            line = process.stdout.readline()
            found = re.search(r"web UI for people at (http://127\.0\.0\.1:\d+)/", line)
            if found:
                url = found.group(1)
                break
        assert url, "up did not print the web UI's address"
        yield Served(url, db, tokens)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_sync.sync_playwright() as play:
        launched = play.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def _signed_in(browser: object, served: Served, person: str, javascript: bool = True):  # type: ignore[no-untyped-def]
    context = browser.new_context(java_script_enabled=javascript)  # type: ignore[attr-defined]
    context.set_default_timeout(UI_TIMEOUT_MS)
    page = context.new_page()
    page.goto(served.url + "/desk/General")
    assert "/signin" in page.url
    page.fill("#token", served.tokens[person])
    page.click("form.signin button")
    page.wait_for_url(re.compile(r"/desk/General$"))
    return context, page


def _post(page, text: str) -> None:  # type: ignore[no-untyped-def]
    page.fill("#compose textarea", text)
    page.click("#compose button")
    page.wait_for_load_state()


def test_sign_in_post_and_see_it(browser: object, served: Served) -> None:
    context, page = _signed_in(browser, served, "pat")
    _post(page, "hello from the browser <b>bold?</b>")
    page.wait_for_selector("text=hello from the browser <b>bold?</b>")
    assert page.locator("#transcript b").count() == 0  # text, not markup
    context.close()


def test_a_second_clients_post_appears_live(browser: object, served: Served) -> None:
    watcher_context, watcher = _signed_in(browser, served, "pat")
    poster_context, poster = _signed_in(browser, served, "sam")
    watcher.wait_for_function("document.body.dataset.live")  # the event stream is open
    watcher.wait_for_timeout(300)
    _post(poster, "live one from sam")
    watcher.wait_for_selector("#transcript >> text=live one from sam")
    assert "/desk/General" in watcher.url  # no navigation: the page updated itself
    watcher_context.close()
    poster_context.close()


def test_pin_by_button_shows_on_the_pinboard(browser: object, served: Served) -> None:
    context, page = _signed_in(browser, served, "pat")
    _post(page, "the decision to pin")
    message = page.locator("article.msg", has_text="the decision to pin").last
    message.locator("form.pin button").click()
    page.wait_for_load_state()
    board = page.locator("#sidebar ul.pins")
    board.get_by_text("the decision to pin").wait_for()
    assert (
        page.locator("article.msg", has_text="the decision to pin")
        .last.locator(".badge")
        .is_visible()
    )
    context.close()


def test_search_with_a_regex(browser: object, served: Served) -> None:
    context, page = _signed_in(browser, served, "pat")
    _post(page, "regex target fixed-42")
    page.fill("#sidebar input[name=q]", r"/fixed-\d+/")
    page.click("#sidebar form.search button")
    page.wait_for_url(re.compile(r"/search\?q="))
    page.locator("ol.hits").get_by_text("fixed-42").wait_for()
    page.locator("ol.hits a").first.click()
    page.wait_for_url(re.compile(r"/thread/\d+#m\d+$"))
    context.close()


def test_the_brevity_counter_counts_while_typing(browser: object, served: Served) -> None:
    context, page = _signed_in(browser, served, "pat")
    page.fill("#compose textarea", "x" * 610)
    counter = page.locator("#compose output.counter")
    assert counter.inner_text() == "610 / 600 (over by 10)"
    assert "over" in (counter.get_attribute("class") or "")
    context.close()


def test_the_focus_view_opens(browser: object, served: Served) -> None:
    context, page = _signed_in(browser, served, "pat")
    page.goto(served.url + "/focus")
    page.fill("input[name=goal]", "the discount is rounded wrong")
    page.click("form.picker button")
    page.wait_for_selector("svg.graph")
    page.locator(".focus-item", has_text="apply_discount").first.wait_for()
    assert page.locator("meter.budget").count() == 1
    context.close()


def test_reading_works_with_javascript_off(browser: object, served: Served) -> None:
    context, page = _signed_in(browser, served, "pat", javascript=False)
    assert page.locator("#transcript article.msg").count() >= 1
    page.click("text=Desks")
    page.wait_for_selector("table.desks")
    context.close()


def test_scrolling_to_the_top_loads_older_messages(browser: object, served: Served) -> None:
    from coderooms.web.reads import TRANSCRIPT_ROOTS

    context, page = _signed_in(browser, served, "pat")
    page.goto(served.url + "/desk/long")
    csrf = page.locator("#compose input[name=csrf]").get_attribute("value")
    for i in range(TRANSCRIPT_ROOTS + 3):
        context.request.post(
            served.url + "/desk/long/post", form={"csrf": csrf, "content": f"long message {i}"}
        )
    page.reload()
    assert page.get_by_text("long message 0", exact=True).count() == 0
    page.wait_for_function("window.scrollY > 0")  # opened at the newest message
    page.evaluate("window.scrollTo(0, 0)")
    page.get_by_text("long message 0", exact=True).wait_for()
    assert page.url.endswith("/desk/long")  # loaded in place
    assert page.locator("a.older").count() == 0  # the start of the desk is reached
    context.close()


def test_a_live_update_keeps_what_the_person_is_doing(browser: object, served: Served) -> None:
    # each update replaced the whole transcript and sidebar: a half-typed sidebar search
    # was erased and the keyboard focus fell to the page's body
    watcher_context, watcher = _signed_in(browser, served, "pat")
    poster_context, poster = _signed_in(browser, served, "sam")
    watcher.wait_for_function("document.body.dataset.live")
    watcher.fill("#sidebar input[name=q]", "half typed")
    watcher.focus("#sidebar input[name=q]")
    before = watcher.evaluate("document.body.dataset.refreshed || ''")
    _post(poster, "a post while pat types")
    watcher.wait_for_function(f"(document.body.dataset.refreshed || '') !== {before!r}")
    watcher.wait_for_selector("#transcript >> text=a post while pat types")
    assert watcher.input_value("#sidebar input[name=q]") == "half typed"
    assert watcher.evaluate("document.activeElement.name") == "q"
    watcher_context.close()
    poster_context.close()
