"""The README's examples run against the live server: every ```python block is executed, and
the ``>>>`` examples are checked with doctest, output included."""

from __future__ import annotations

import doctest
import re
from pathlib import Path
from typing import List

import pytest

import warren

from .conftest import Server

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> List[str]:
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)


@pytest.fixture
def environment(server: Server, client: warren.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's examples read WARREN_URL and WARREN_API_KEY, as a user's program would."""
    monkeypatch.setenv("WARREN_URL", server.url)
    monkeypatch.setenv("WARREN_API_KEY", server.api_key)


def test_the_readme_has_examples() -> None:
    assert len(_python_blocks()) >= 5


@pytest.mark.usefixtures("environment")
@pytest.mark.parametrize("block", _python_blocks(), ids=lambda block: block.splitlines()[-1].strip()[:40])
def test_a_python_block_runs(block: str) -> None:
    exec(compile(block, str(README), "exec"), {"__name__": "readme"})


@pytest.mark.usefixtures("environment")
def test_the_interactive_examples_print_what_they_show() -> None:
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted >= 5
    assert result.failed == 0
