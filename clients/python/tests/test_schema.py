"""The records and the query parameters, field by field, against the committed OpenAPI document:
every property of a record is a field (nested objects too), a nullable one is Optional, a
date-time a datetime, an enumeration a Literal of exactly its values; and every query parameter of every operation can be sent."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from typing import Any, Callable, Dict, List, Literal, Set, Tuple, Union, get_args, get_origin, get_type_hints
from urllib.parse import parse_qs, urlsplit

import pytest

import warren
from warren import models

from .stub_server import StubServer
from .test_coverage import OPENAPI

DOCUMENT: Dict[str, Any] = json.loads(OPENAPI.read_text())
SCHEMAS: Dict[str, Any] = DOCUMENT["components"]["schemas"]

# Each component schema and the record it decodes into.
RECORDS: Dict[str, type] = {
    "UserRef": models.UserRef,
    "Device": models.Device,
    "User": models.User,
    "Network": models.Network,
    "Key": models.Key,
    "Route": models.Route,
    "ConnectionEntry": models.ConnectionEntry,
    "AuditEntry": models.AuditEntry,
    "ValidationResult": models.ValidationResult,
    "Peer": models.Peer,
    "Netmap": models.Netmap,
    "Event": models.Event,
    "Webhook": models.Webhook,
    "WebhookDelivery": models.WebhookDelivery,
    "SsoConfig": models.SSO,
    "Me": models.Me,
}


def _resolve(schema: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMAS[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _nullable(schema: Dict[str, Any]) -> Tuple[bool, Dict[str, Any]]:
    """Whether the schema admits null, and the schema of its other values."""
    schema = _resolve(schema)
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        return True, schema
    options = [_resolve(option) for option in schema.get("anyOf", schema.get("oneOf", []))]
    others = [option for option in options if option.get("type") != "null"]
    if len(others) < len(options):
        return True, others[0]
    return False, schema


def _enum(schema: Dict[str, Any]) -> Set[str]:
    """The values of an enumeration, also one written as a union of one-value enumerations."""
    if "enum" in schema:
        return set(schema["enum"])
    options = [_resolve(option) for option in schema.get("anyOf", schema.get("oneOf", []))]
    if options and all("enum" in option for option in options):
        return {value for option in options for value in option["enum"]}
    return set()


def _json_fields(cls: type) -> Dict[str, Any]:
    hints = get_type_hints(cls)
    out: Dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        head, *rest = field.name.rstrip("_").split("_")
        out[field.metadata.get("json") or head + "".join(part.title() for part in rest)] = hints[field.name]
    return out


def _compare(where: str, schema: Dict[str, Any], hint: Any, problems: List[str]) -> None:
    null, schema = _nullable(schema)
    optional = get_origin(hint) is Union and type(None) in get_args(hint)
    if optional:
        hint = next(arg for arg in get_args(hint) if arg is not type(None))
    if null and not optional and hint is not Any:
        problems.append(f"{where} is nullable but its field is not Optional")
    values = _enum(schema)
    if values and (get_origin(hint) is not Literal or set(get_args(hint)) != values):
        problems.append(f"{where} is one of {sorted(values)}, its field is {hint}")
    if schema.get("format") == "date-time" and hint is not datetime:
        problems.append(f"{where} is a date-time but its field is {hint}")
    if "items" in schema and get_origin(hint) is tuple:
        _compare(f"{where}[]", schema["items"], get_args(hint)[0], problems)
        return
    if not schema.get("properties") or not dataclasses.is_dataclass(hint):
        return  # free-form objects (dicts) take whatever comes
    fields = _json_fields(hint)  # type: ignore[arg-type]
    for name, prop in schema["properties"].items():
        if name not in fields:
            problems.append(f"{where}.{name} has no field in {hint.__name__}")  # type: ignore[union-attr]
            continue
        _compare(f"{where}.{name}", prop, fields[name], problems)


def test_every_record_has_every_field_of_its_schema() -> None:
    problems: List[str] = []
    for name, record in RECORDS.items():
        _compare(name, SCHEMAS[name], record, problems)
    unmapped = set(SCHEMAS) - set(RECORDS) - {"Problem"}
    assert not unmapped, f"schemas without a record: {sorted(unmapped)}"
    assert not problems, "\n".join(problems)


def _operation(operation_id: str) -> Dict[str, Any]:
    for methods in DOCUMENT["paths"].values():
        for operation in methods.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                return operation
    raise KeyError(operation_id)


def test_the_device_page_has_every_field_of_its_answer() -> None:
    answer = _operation("listDevices")["responses"]["200"]["content"]["application/json"]["schema"]
    problems: List[str] = []
    _compare("listDevices", answer, models.DevicePage, problems)
    assert not problems, "\n".join(problems)


# Calls that set every query option of each operation that has some; options that exclude each
# other (a cursor replaces since) take two calls.
QUERY_CALLS: Dict[str, List[Callable[[warren.Client], object]]] = {
    "listDevices": [
        lambda c: c.devices.list(tags=["tag:a"], online=True, user="u", fields="all"),
        lambda c: c.devices.page(tags=["tag:a"], online=True, user="u", fields="all", q="web", limit=5, cursor="c"),
    ],
    "listUsers": [lambda c: c.users.list(role="admin")],
    "listKeys": [lambda c: c.keys.list(type="api", state="valid")],
    "listRoutes": [lambda c: c.routes.list(state="pending", device="d")],
    "listConnectionLog": [
        lambda c: c.logs.connections_page(since="1h", device="d", limit=5),
        lambda c: c.logs.connections_page(cursor="c"),
    ],
    "listAuditLog": [
        lambda c: c.logs.audit_page(since="1h", key="k", limit=5, changes=True),
        lambda c: c.logs.audit_page(cursor="c"),
    ],
    "listEvents": [
        lambda c: c.events.page(since="1h", types=["device.*"], limit=5),
        lambda c: c.events.page(cursor="c"),
    ],
    "getNetmap": [lambda c: warren.NodeClient(c.url, "wrn_node_stub").follow_netmap(warren.Netmap(device=None, peers=(), version=1))],  # type: ignore[arg-type]
    "listWebhookDeliveries": [lambda c: c.webhooks.deliveries_page("whk_1", state="failed", limit=5, cursor="c")],
}


def _query_operations() -> Dict[str, Set[str]]:
    out: Dict[str, Set[str]] = {}
    for path, methods in DOCUMENT["paths"].items():
        for operation in methods.values():
            names = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"}
            if names:
                out[operation["operationId"]] = names
    return out


@pytest.mark.parametrize("operation_id", sorted(_query_operations()))
def test_every_query_parameter_can_be_sent(operation_id: str) -> None:
    assert operation_id in QUERY_CALLS, f"{operation_id} takes query parameters no call here sets"
    sent: Set[str] = set()
    with StubServer([(200, [("Content-Type", "application/json")], b"{}")]) as stub:
        with warren.Client(stub.url, "wrn_api_stub") as client:
            for call in QUERY_CALLS[operation_id]:
                try:
                    call(client)
                except warren.WarrenError:
                    pass  # "{}" is no page: only what was sent matters here
            for _, target, _ in stub.requests:
                sent |= set(parse_qs(urlsplit(target).query))
    missing = _query_operations()[operation_id] - sent
    assert not missing, f"{operation_id}: the client cannot send {sorted(missing)}"

