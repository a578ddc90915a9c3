from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from .._decode import decode, decode_list
from .._http import Response, Transport, segment
from ..errors import invalid_response
from ..models import Policy, PolicyText, PolicyVersion, ValidationResult

HUJSON = "application/hujson"

PolicySource = Union[str, Mapping[str, Any]]


class PolicyApi:
    """``client.policy``: the network's access policy (HuJSON), its history and validation.

    A policy is given as text (sent verbatim, comments and all) or as a mapping (sent as JSON).
    """

    def __init__(self, http: Transport) -> None:
        self._http = http

    def get(self) -> Policy:
        """``GET /v1/acl`` as JSON (comments dropped), with its ETag."""
        response = self._http.request("GET", "/v1/acl")
        return Policy(document=_document(response), etag=_etag(response))

    def get_text(self) -> PolicyText:
        """``GET /v1/acl`` as the stored HuJSON text, with its ETag."""
        response = self._http.request("GET", "/v1/acl", headers={"Accept": HUJSON})
        return PolicyText(text=response.text, etag=_etag(response))

    def set(self, policy: PolicySource, *, if_match: Optional[str] = None) -> Policy:
        """``PUT /v1/acl``: replaces the policy and returns it with its new ETag.

        With ``if_match`` (an ETag read earlier) the server refuses with 412
        ``precondition_failed`` when the policy changed since. An invalid policy raises
        WarrenError ``policy_invalid`` whose ``errors`` hold each problem's line and column.
        """
        text, content_type = _body(policy)
        headers = {"If-Match": if_match} if if_match else {}
        response = self._http.request("PUT", "/v1/acl", text=text, content_type=content_type, headers=headers)
        return Policy(document=_document(response), etag=_etag(response))

    def validate(self, policy: PolicySource) -> ValidationResult:
        """``POST /v1/acl/validate``: the problems ``set`` would report; changes nothing."""
        text, content_type = _body(policy)
        response = self._http.request("POST", "/v1/acl/validate", text=text, content_type=content_type)
        return decode(ValidationResult, response.json())

    def history(self) -> Tuple[PolicyVersion, ...]:
        """``GET /v1/acl/history``: every stored version, newest first."""
        return decode_list(PolicyVersion, self._http.json("GET", "/v1/acl/history"), "versions")

    def version(self, version: int) -> PolicyText:
        """``GET /v1/acl/history/{version}``: that version's text exactly as it was sent."""
        response = self._http.request("GET", f"/v1/acl/history/{segment(version)}", headers={"Accept": HUJSON})
        return PolicyText(text=response.text, etag=_etag(response))


def _body(policy: PolicySource) -> Tuple[str, str]:
    if isinstance(policy, str):
        return policy, HUJSON
    return json.dumps(dict(policy), indent=2), "application/json"


def _etag(response: Response) -> str:
    return response.header("ETag") or ""


def _document(response: Response) -> Dict[str, Any]:
    document = response.json()
    if not isinstance(document, dict):
        raise invalid_response("the policy is not a JSON object")
    return document
