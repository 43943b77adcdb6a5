"""`coderooms up` serves people and agents on one port: `/` is the web UI, `/mcp` MCP."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent.parent / "mcp"))
from mcp_harness import serving_up  # noqa: E402
from mcp_repo import write_fixture_repo  # noqa: E402

CODEROOMS = str(Path(sys.executable).parent / "coderooms")
TIMEOUT_S = 120.0


def test_up_prints_the_web_address_and_serves_both(tmp_path: Path) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    db = f"sqlite:///{tmp_path / 'rooms.db'}"
    run = [CODEROOMS, "--db", db]
    subprocess.run([*run, "person", "add", "pat", "--label", "Pat"], check=True)
    token = subprocess.run(
        [*run, "person", "token", "pat"], check=True, capture_output=True, text=True
    ).stdout.strip()
    with serving_up(db, repo, tmp_path) as process:
        assert process.stdout is not None
        lines = [process.stdout.readline(), process.stdout.readline()]
        mcp = re.search(r"serving MCP at (http://127\.0\.0\.1:(\d+))/mcp", lines[0])
        web = re.search(r"web UI for people at (http://127\.0\.0\.1:(\d+))/ ", lines[1])
        assert mcp and web, lines
        assert mcp.group(1) == web.group(1)  # one port
        base = web.group(1)
        with httpx.Client(base_url=base, timeout=TIMEOUT_S) as client:
            first = client.get("/", follow_redirects=False)
            assert first.status_code == 303 and first.headers["location"].startswith("/signin")
            signed = client.post("/signin", data={"token": token}, follow_redirects=True)
            assert signed.status_code == 200 and "signed in as pat" in signed.text
            agents = client.post("/mcp", json={}, headers={"Accept": "application/json"})
            assert agents.status_code == 401  # MCP still wants an agent's bearer token
            assert client.get("/.well-known/oauth-protected-resource").status_code == 404
