from __future__ import annotations

from typing import Iterator

import pytest

import warren

from .conftest import BASE_POLICY

# group:nope is not defined: the problem is on line 5.
INVALID = """{
  "tagOwners": { "tag:ci": ["autogroup:admin"] },
  // the next rule names a group no one defined
  "acls": [
    { "action": "accept", "src": ["group:nope"], "dst": ["tag:ci:22"] },
  ],
}
"""


@pytest.fixture
def restore_policy(client: warren.Client) -> Iterator[None]:
    yield
    client.policy.set(BASE_POLICY)


def test_the_policy_is_read_as_json_and_as_its_stored_text(client: warren.Client) -> None:
    policy = client.policy.get()
    text = client.policy.get_text()
    assert "tag:server" in policy.document["tagOwners"]
    assert "// the test suite's policy" in text.text
    assert policy.etag == text.etag and policy.etag.startswith('"')


@pytest.mark.usefixtures("restore_policy")
def test_set_stores_the_text_verbatim_and_keeps_every_version(client: warren.Client) -> None:
    edited = BASE_POLICY.replace("// the test suite's policy", "// edited by the python suite")
    stored = client.policy.set(edited)
    assert client.policy.get_text() == warren.PolicyText(text=edited, etag=stored.etag)

    newest = client.policy.history()[0]
    assert newest.etag == stored.etag
    assert client.policy.version(newest.version).text == edited
    with pytest.raises(warren.WarrenError) as missing:
        client.policy.version(newest.version + 1000)
    assert missing.value.status == 404


@pytest.mark.usefixtures("restore_policy")
def test_a_policy_can_be_set_from_a_mapping(client: warren.Client) -> None:
    document = client.policy.get().document
    document["tagOwners"]["tag:extra"] = ["autogroup:admin"]
    stored = client.policy.set(document)
    assert "tag:extra" in stored.document["tagOwners"]


@pytest.mark.usefixtures("restore_policy")
def test_a_stale_if_match_is_refused_and_changes_nothing(client: warren.Client) -> None:
    first = client.policy.set(BASE_POLICY + "\n// one\n")
    second = client.policy.set(BASE_POLICY + "\n// two\n", if_match=first.etag)
    with pytest.raises(warren.WarrenError) as stale:
        client.policy.set(BASE_POLICY + "\n// three\n", if_match=first.etag)
    assert (stale.value.status, stale.value.code) == (412, "precondition_failed")
    assert client.policy.get_text().etag == second.etag


def test_validate_reports_each_problem_at_its_line(client: warren.Client) -> None:
    result = client.policy.validate(INVALID)
    assert result.valid is False
    assert [error.line for error in result.errors] == [5]
    assert "group:nope" in result.errors[0].msg
    assert client.policy.validate(BASE_POLICY) == warren.ValidationResult(valid=True, errors=(), tests=())


def test_validate_reports_each_policy_test(client: warren.Client) -> None:
    policy = BASE_POLICY.replace(
        '"acls": [',
        '''"tests": [
    { "src": "tag:ci", "accept": ["tag:server:22"] },
    { "src": "tag:server", "accept": ["tag:ci:22"] },
  ],
  "acls": [''',
        1,
    )
    result = client.policy.validate(policy)
    assert result.valid is False
    passing, failing = result.tests
    assert (passing.src, passing.passed, passing.failures) == ("tag:ci", True, ())
    assert (failing.src, failing.passed, failing.line) == ("tag:server", False, passing.line + 1)
    assert failing.failures == result.errors
    assert "expected accept" in failing.failures[0].msg


def test_an_invalid_policy_is_refused_with_its_lines_and_changes_nothing(client: warren.Client) -> None:
    before = client.policy.get_text()
    with pytest.raises(warren.WarrenError) as refused:
        client.policy.set(INVALID, if_match=before.etag)
    error = refused.value
    assert (error.status, error.code) == (400, "policy_invalid")
    assert [(problem.line, problem.column) for problem in error.errors] == [(5, error.errors[0].column)]
    assert "line 5" in str(error)
    assert client.policy.get_text() == before
