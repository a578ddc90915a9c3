from __future__ import annotations

from typing import Optional, Tuple

from .._decode import decode, decode_list
from .._http import Transport, compact, segment
from ..models import Role, User, UserStatus


class Users:
    """``client.users``: the people of the network and their roles."""

    def __init__(self, http: Transport) -> None:
        self._http = http

    def list(self, *, role: Optional[Role] = None) -> Tuple[User, ...]:
        """``GET /v1/users``, optionally only those with ``role``."""
        return decode_list(User, self._http.json("GET", "/v1/users", query={"role": role}), "users")

    def create(
        self,
        *,
        login_name: str,
        display_name: Optional[str] = None,
        role: Optional[Role] = None,
        retry: bool = True,
    ) -> User:
        """``POST /v1/users`` (role ``member`` unless given). A taken login name is 409 ``conflict``."""
        body = compact({"loginName": login_name, "displayName": display_name, "role": role})
        return decode(User, self._http.json("POST", "/v1/users", body=body, retry=retry))

    def update(
        self,
        id: str,
        *,
        role: Optional[Role] = None,
        display_name: Optional[str] = None,
        status: Optional[UserStatus] = None,
        retry: bool = True,
    ) -> User:
        """``PATCH /v1/users/{id}``; ``status`` is ``active`` or ``suspended``.

        Demoting, suspending or removing the last active owner is 409 ``invalid_state``.
        """
        body = compact({"role": role, "displayName": display_name, "status": status})
        return decode(User, self._http.json("PATCH", f"/v1/users/{segment(id)}", body=body, retry=retry))

    def delete(self, id: str) -> None:
        """``DELETE /v1/users/{id}``: removes the user and their devices; keys stay."""
        self._http.json("DELETE", f"/v1/users/{segment(id)}")

