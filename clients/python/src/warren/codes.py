"""The API's stable error codes (a problem's ``code``), to compare ``WarrenError.code`` with.

    try:
        client.users.create(login_name="ana@example.com")
    except warren.PermissionDeniedError as error:
        if error.code == warren.codes.PLAN_LIMIT:
            ...

Codes the client itself gives: ``CONNECTION_ERROR`` and ``TIMEOUT`` (a ``WarrenConnectionError``),
``INVALID_RESPONSE`` (an answer that is not the API's), and ``http_<status>`` for an error page
that did not come from Warren.
"""

from typing import Final

INVALID_REQUEST: Final = "invalid_request"
UNKNOWN_FIELD: Final = "unknown_field"
INVALID_DURATION: Final = "invalid_duration"
INVALID_TAG: Final = "invalid_tag"
INVALID_PREFIX: Final = "invalid_prefix"
POLICY_INVALID: Final = "policy_invalid"
UNAUTHENTICATED: Final = "unauthenticated"
KEY_EXPIRED: Final = "key_expired"
KEY_REVOKED: Final = "key_revoked"
INSUFFICIENT_SCOPE: Final = "insufficient_scope"
PLAN_LIMIT: Final = "plan_limit"
NOT_FOUND: Final = "not_found"
INVALID_STATE: Final = "invalid_state"
CONFLICT: Final = "conflict"
PRECONDITION_FAILED: Final = "precondition_failed"
PAYLOAD_TOO_LARGE: Final = "payload_too_large"
UNSUPPORTED_MEDIA_TYPE: Final = "unsupported_media_type"
RATE_LIMITED: Final = "rate_limited"
INTERNAL: Final = "internal"

# Given by the client, not the server.
CONNECTION_ERROR: Final = "connection_error"
TIMEOUT: Final = "timeout"
INVALID_RESPONSE: Final = "invalid_response"
