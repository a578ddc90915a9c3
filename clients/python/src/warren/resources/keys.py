from __future__ import annotations

from typing import Optional, Sequence, Tuple

from .._decode import decode, decode_list
from .._http import Transport, compact, segment
from ..models import Key, KeyState, KeyType, Scope


class Keys:
    """``client.keys``: auth keys (to enroll devices) and API keys (to call this API)."""

    def __init__(self, http: Transport) -> None:
        self._http = http

    def list(self, *, type: Optional[KeyType] = None, state: Optional[KeyState] = None) -> Tuple[Key, ...]:
        """``GET /v1/keys``, oldest first; ``type`` is ``auth`` or ``api``, ``state`` e.g. ``valid``."""
        query = {"type": type, "state": state}
        return decode_list(Key, self._http.json("GET", "/v1/keys", query=query), "keys")

    def create(
        self,
        *,
        type: KeyType = "auth",
        expires_in: Optional[str] = None,
        description: Optional[str] = None,
        reusable: Optional[bool] = None,
        ephemeral: Optional[bool] = None,
        pre_approved: Optional[bool] = None,
        tags: Optional[Sequence[str]] = None,
        user: Optional[str] = None,
        name: Optional[str] = None,
        scopes: Optional[Sequence[Scope]] = None,
        rate_limit: Optional[int] = None,
        retry: bool = True,
    ) -> Key:
        """``POST /v1/keys``: the new key with its secret in ``key``, shown only this once.

        An auth key (``type="auth"``, the default) takes ``reusable``, ``ephemeral``,
        ``pre_approved`` (its devices skip device approval), ``tags`` and ``user``; an API key (``type="api"``) takes ``name``, ``scopes`` and ``rate_limit``
        (requests a minute; only a key with scope ``all`` may set it). Both take
        ``expires_in`` (``"24h"``, ``"90d"``; at most ``365d``) and ``description``.
        """
        body = compact(
            {
                "type": type,
                "expiresIn": expires_in,
                "description": description,
                "reusable": reusable,
                "ephemeral": ephemeral,
                "preApproved": pre_approved,
                "tags": None if tags is None else list(tags),
                "user": user,
                "name": name,
                "scopes": None if scopes is None else list(scopes),
                "rateLimit": rate_limit,
            }
        )
        return decode(Key, self._http.json("POST", "/v1/keys", body=body, retry=retry))

    def get(self, id: str) -> Key:
        """``GET /v1/keys/{id}``."""
        return decode(Key, self._http.json("GET", f"/v1/keys/{segment(id)}"))

    def delete(self, id: str) -> None:
        """``DELETE /v1/keys/{id}``: the key stops working at once (deleting a revoked key is fine)."""
        self._http.json("DELETE", f"/v1/keys/{segment(id)}")
