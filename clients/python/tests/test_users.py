from __future__ import annotations

import pytest

import warren

from .conftest import unique


def test_a_user_is_created_listed_changed_and_removed(client: warren.Client) -> None:
    login = f"{unique('ana')}@example.com"
    user = client.users.create(login_name=login.upper(), display_name="Ana", role="admin")
    assert user.login_name == login  # stored in lower case
    assert (user.display_name, user.role, user.device_count) == ("Ana", "admin", 0)
    assert user.id in {u.id for u in client.users.list(role="admin")}
    assert user.id not in {u.id for u in client.users.list(role="member")}

    changed = client.users.update(user.id, role="member", display_name="Ana B.")
    assert (changed.role, changed.display_name) == ("member", "Ana B.")
    assert client.users.update(user.id).role == "member"  # nothing given, nothing changed

    client.users.delete(user.id)
    assert user.id not in {u.id for u in client.users.list()}


def test_the_display_name_defaults_to_the_login_names_local_part(client: warren.Client) -> None:
    local = unique("bo")
    user = client.users.create(login_name=f"{local}@example.com")
    assert (user.display_name, user.role) == (local, "member")
    client.users.delete(user.id)


def test_a_taken_login_name_is_a_conflict(client: warren.Client) -> None:
    login = f"{unique('cy')}@example.com"
    user = client.users.create(login_name=login)
    with pytest.raises(warren.WarrenError) as conflict:
        client.users.create(login_name=login)
    assert (conflict.value.status, conflict.value.code) == (409, "conflict")
    client.users.delete(user.id)


def test_the_last_owner_cannot_be_demoted(client: warren.Client) -> None:
    owners = client.users.list(role="owner")
    assert len(owners) == 1
    with pytest.raises(warren.WarrenError) as refused:
        client.users.update(owners[0].id, role="member")
    assert (refused.value.status, refused.value.code) == (409, "invalid_state")
    assert client.users.list(role="owner") == owners


def test_an_unknown_user_is_not_found(client: warren.Client) -> None:
    with pytest.raises(warren.WarrenError) as missing:
        client.users.delete("usr_doesnotexist")
    assert (missing.value.status, missing.value.code) == (404, "not_found")
