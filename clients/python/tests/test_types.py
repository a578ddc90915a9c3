"""The enumerations are Literal types: mypy refuses a misspelt state, role, key type or scope."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api as mypy_api

SRC = Path(__file__).resolve().parents[1] / "src"

MISSPELT = """
import warren

def calls(client: warren.Client) -> None:
    client.routes.list(state="pendingg")
    client.users.create(login_name="ana@example.com", role="superuser")
    client.keys.create(type="apii", scopes=["everything"])
    client.keys.list(state="gone")
"""

SPELT = """
import warren

def calls(client: warren.Client) -> None:
    client.routes.list(state="pending")
    client.users.create(login_name="ana@example.com", role="network-admin")
    client.keys.create(type="api", scopes=["read", "webhooks"])
    client.keys.list(state="valid")
    route_state: warren.RouteState = client.routes.list()[0].state
"""


def _mypy(tmp_path: Path, source: str) -> str:
    program = tmp_path / "program.py"
    program.write_text(source)
    cache = tmp_path / "mypy-cache"
    stdout, stderr, _ = mypy_api.run(["--strict", "--cache-dir", str(cache), str(program)])
    return stdout + stderr


def test_mypy_refuses_values_outside_an_enumeration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYPYPATH", str(SRC))
    report = _mypy(tmp_path, MISSPELT)
    for wrong in ("pendingg", "superuser", "apii", "everything", "gone"):
        assert f"Literal['{wrong}']" in report, report
    assert "Found 5 errors" in report, report


def test_mypy_accepts_the_spelt_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYPYPATH", str(SRC))
    assert "Success" in _mypy(tmp_path, SPELT)
