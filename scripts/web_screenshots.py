"""Screenshots of every page of the web UI, for a person to look at.

One command::

    .venv/bin/python scripts/web_screenshots.py [--out DIR] [--repo PATH]

Starts ``coderooms up`` on a fresh store in a temporary folder, fills a small room
(agents, a person, a desk, a thread, a pin, a mention, a code block), signs in with
Debian's chromium through Playwright and writes one PNG per page to ``--out`` (default:
``web-screenshots`` in the system temporary folder): desks, desk, thread, search,
agent view and focus view (on ``--repo``, default this project).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CODEROOMS = str(Path(sys.executable).parent / "coderooms")
CHROMIUM = "/usr/bin/chromium"
PROJECT = Path(__file__).resolve().parent.parent
VIEWPORT = {"width": 1280, "height": 860}

ROOM = [
    ("agent:coder", "General", None, "Plan: fix the retry backoff first, then the cache."),
    ("agent:reviewer", "General", 1, "Agreed. @coder keep the cap at 30 s."),
    ("person:ada", "General", 1, "Ship it once `test_backoff` passes."),
    (
        "agent:coder",
        "General",
        None,
        "The cap lives here:\n```python\ndef backoff(attempt: int) -> float:\n"
        "    return min(30.0, 0.5 * 2 ** attempt)\n```",
    ),
    ("person:ada", "General", None, "!pin ^4 #decision the backoff cap"),
    ("agent:reviewer", "eng", None, "Engineering desk: reviewing the retry change."),
]


def _cli(db: str, *args: str) -> str:
    done = subprocess.run(
        [CODEROOMS, "--db", db, *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "web-screenshots")
    parser.add_argument("--repo", type=Path, default=PROJECT)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="coderooms-shots-") as tmp:
        db = f"sqlite:///{Path(tmp) / 'rooms.db'}"
        _cli(db, "agent", "add", "coder", "--name", "Coder")
        _cli(db, "agent", "add", "reviewer", "--name", "Reviewer")
        _cli(db, "person", "add", "ada", "--label", "Ada")
        _cli(db, "desk", "create", "eng", "--name", "Engineering", "--description", "Retries")
        _cli(db, "desk", "add", "eng", "reviewer")
        for author, desk, parent, text in ROOM:
            reply = ["--reply-to", str(parent)] if parent else []
            _cli(db, "post", "--as", author, "--desk", desk, *reply, text)
        token = _cli(db, "person", "token", "ada")
        server = subprocess.Popen(
            [CODEROOMS, "--db", db, "up", "--port", "0", "--repo", str(args.repo)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert server.stdout is not None
            base = None
            for _ in range(40):
                found = re.search(r"web UI for people at (\S+)/ ", server.stdout.readline())
                if found:
                    base = found.group(1)
                    break
            if base is None:
                print("coderooms up did not print the web UI's address", file=sys.stderr)
                return 1
            pages = {
                "desks": "/",
                "desk": "/desk/General",
                "thread": "/desk/General/thread/1",
                "search": "/desk/General/search?q=%2Fback(off)%3F%2F",
                "agent-view": "/agent?agent=reviewer&desk=General",
                "focus": "/focus?goal=where+is+the+retry+backoff+cap&budget=3000",
            }
            with sync_playwright() as play:
                browser = play.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                page = browser.new_page(viewport=VIEWPORT)
                page.set_default_timeout(120_000)
                page.goto(base + "/signin")
                page.fill("#token", token)
                page.click("form.signin button")
                page.wait_for_load_state()
                for name, path in pages.items():
                    page.goto(base + path)
                    target = args.out / f"{name}.png"
                    page.screenshot(path=str(target), full_page=name != "focus")
                    print(target)
                browser.close()
        finally:
            server.terminate()
            server.wait(60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
