"""Fixture repositories are written into tmp dirs by the tests themselves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from index_fixtures import Files, new_repo


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    def make(files: Files, *, use_git: bool = False, name: str = "repo") -> Path:
        return new_repo(tmp_path, files, use_git=use_git, name=name)

    return make
