from __future__ import annotations

from typing import Optional, Sequence, Tuple

from .._decode import decode, decode_list
from .._http import Transport, segment
from ..models import Device, DevicePage

# Devices per page when a page is asked for without a limit (the server's default too); sending
# it is what makes the answer a page rather than the whole list.
_DEVICE_PAGE = 100


class Devices:
    """``client.devices``: list, inspect, tag, approve, expire and delete devices."""

    def __init__(self, http: Transport) -> None:
        self._http = http

    def list(
        self,
        *,
        tags: Optional[Sequence[str]] = None,
        online: Optional[bool] = None,
        user: Optional[str] = None,
        fields: Optional[str] = None,
    ) -> Tuple[Device, ...]:
        """``GET /v1/devices``. Filters combine with AND; a device must carry every tag given.

        ``user`` is a user id or login name; ``fields="all"`` adds the detail fields.
        """
        if isinstance(tags, str):
            tags = [tags]
        query = {"tag": tags, "online": online, "user": user, "fields": fields}
        return decode_list(Device, self._http.json("GET", "/v1/devices", query=query), "devices")

    def page(
        self,
        *,
        tags: Optional[Sequence[str]] = None,
        online: Optional[bool] = None,
        user: Optional[str] = None,
        fields: Optional[str] = None,
        q: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> DevicePage:
        """``GET /v1/devices`` one page at a time, in name order, for lists too long to read whole.

        Takes the filters of ``list``, and ``q`` (a part of the name, or an address). Pass
        ``next_cursor`` back as ``cursor`` for the next page, until ``has_more`` is False.
        """
        if isinstance(tags, str):
            tags = [tags]
        query = {
            "tag": tags,
            "online": online,
            "user": user,
            "fields": fields,
            "q": q,
            "limit": _DEVICE_PAGE if limit is None else limit,
            "cursor": cursor,
        }
        return decode(DevicePage, self._http.json("GET", "/v1/devices", query=query))

    def get(self, id: str) -> Device:
        """``GET /v1/devices/{id}``: the detail record."""
        return decode(Device, self._http.json("GET", f"/v1/devices/{segment(id)}"))

    def delete(self, id: str) -> None:
        """``DELETE /v1/devices/{id}``: its credential is refused and its addresses freed at once."""
        self._http.json("DELETE", f"/v1/devices/{segment(id)}")

    def set_tags(self, id: str, tags: Sequence[str], *, retry: bool = True) -> Device:
        """``POST /v1/devices/{id}/tags``: replaces the tags (``[]`` clears them).

        Each tag must be defined in the policy's ``tagOwners``.
        """
        body = {"tags": list(tags)}
        return decode(Device, self._http.json("POST", f"/v1/devices/{segment(id)}/tags", body=body, retry=retry))

    def update(self, id: str, *, key_expiry_disabled: Optional[bool] = None, retry: bool = True) -> Device:
        """``PATCH /v1/devices/{id}``: ``key_expiry_disabled=True`` also lifts an expiry that happened."""
        body = {} if key_expiry_disabled is None else {"keyExpiryDisabled": key_expiry_disabled}
        return decode(Device, self._http.json("PATCH", f"/v1/devices/{segment(id)}", body=body, retry=retry))

    def approve(self, id: str, *, retry: bool = True) -> Device:
        """``POST /v1/devices/{id}/approve``: lets a device waiting for approval into netmaps."""
        return decode(Device, self._http.json("POST", f"/v1/devices/{segment(id)}/approve", retry=retry))

    def expire(self, id: str, *, retry: bool = True) -> Device:
        """``POST /v1/devices/{id}/expire``: ends the device's login now; it must log in again."""
        return decode(Device, self._http.json("POST", f"/v1/devices/{segment(id)}/expire", retry=retry))
