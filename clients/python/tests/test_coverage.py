"""Every operation of the committed OpenAPI document has a client method, and every method
named here still has its operation: a new endpoint turns this red until the client gains it."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any, Dict, Set

import warren

OPENAPI = Path(__file__).resolve().parents[1] / ".." / ".." / "docs" / "openapi.json"

# operationId -> the method that implements it, as a path from a Client or a NodeClient.
OPERATIONS: Dict[str, str] = {
    "getNetwork": "client.network.get",
    "updateNetwork": "client.network.update",
    "getMe": "client.network.me",
    "getSso": "client.network.sso",
    "setSso": "client.network.set_sso",
    "listDevices": "client.devices.list",
    "getDevice": "client.devices.get",
    "deleteDevice": "client.devices.delete",
    "setDeviceTags": "client.devices.set_tags",
    "updateDevice": "client.devices.update",
    "approveDevice": "client.devices.approve",
    "expireDevice": "client.devices.expire",
    "listUsers": "client.users.list",
    "createUser": "client.users.create",
    "updateUser": "client.users.update",
    "deleteUser": "client.users.delete",
    "getPolicy": "client.policy.get",
    "setPolicy": "client.policy.set",
    "validatePolicy": "client.policy.validate",
    "listPolicyHistory": "client.policy.history",
    "getPolicyVersion": "client.policy.version",
    "listKeys": "client.keys.list",
    "createKey": "client.keys.create",
    "getKey": "client.keys.get",
    "deleteKey": "client.keys.delete",
    "listRoutes": "client.routes.list",
    "approveRoute": "client.routes.approve",
    "disableRoute": "client.routes.disable",
    "listConnectionLog": "client.logs.connections_page",
    "listAuditLog": "client.logs.audit_page",
    "listEvents": "client.events.page",
    "listWebhooks": "client.webhooks.list",
    "createWebhook": "client.webhooks.create",
    "getWebhook": "client.webhooks.get",
    "updateWebhook": "client.webhooks.update",
    "deleteWebhook": "client.webhooks.delete",
    "rotateWebhookSecret": "client.webhooks.rotate",
    "testWebhook": "client.webhooks.test",
    "listWebhookDeliveries": "client.webhooks.deliveries_page",
    "retryWebhookDelivery": "client.webhooks.retry",
    "registerNode": "node.register",
    "heartbeat": "node.heartbeat",
    "disconnectNode": "node.disconnect",
    "getNetmap": "node.netmap",
    "reportConnections": "node.report_connections",
}

# Public methods that are not one operation each: getPolicy as HuJSON text, the device list a
# page at a time, iterators over a paged operation, and closing connections.
HELPERS = {
    "client.policy.get_text",
    "client.devices.page",
    "client.logs.connections",
    "client.logs.audit",
    "client.events.list",
    "client.webhooks.deliveries",
    "node.follow_netmap",
    "client.close",
    "node.close",
}


def _roots() -> Dict[str, Any]:
    return {
        "client": warren.Client("http://127.0.0.1:9", "wrn_api_unused"),
        "node": warren.NodeClient("http://127.0.0.1:9"),
    }


def _resolve(path: str, roots: Dict[str, Any]) -> Any:
    root, *names = path.split(".")
    target = roots[root]
    for name in names:
        target = getattr(target, name)
    return target


def _document_operations() -> Set[str]:
    document = json.loads(OPENAPI.read_text())
    return {
        operation["operationId"]
        for methods in document["paths"].values()
        for operation in methods.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


def _public_methods(roots: Dict[str, Any]) -> Set[str]:
    """Every public method reachable from the roots through their resource attributes."""
    found: Set[str] = set()
    for root_name, root in roots.items():
        owners = [(root_name, root)] + [
            (f"{root_name}.{name}", value)
            for name, value in vars(root).items()
            if not name.startswith("_") and type(value).__module__.startswith("warren.resources")
        ]
        for prefix, owner in owners:
            for name, _ in inspect.getmembers(type(owner), inspect.isfunction):
                if not name.startswith("_"):
                    found.add(f"{prefix}.{name}")
    return found


def test_every_operation_of_the_document_has_a_method() -> None:
    missing = sorted(_document_operations() - OPERATIONS.keys())
    assert not missing, f"operations without a client method: {', '.join(missing)}"


def test_every_method_in_the_table_is_an_operation_of_the_document() -> None:
    stale = sorted(OPERATIONS.keys() - _document_operations())
    assert not stale, f"table entries whose operation is gone from the document: {', '.join(stale)}"


def test_every_method_named_in_the_table_exists() -> None:
    roots = _roots()
    broken = [f"{op} -> {path}" for op, path in OPERATIONS.items() if not callable(_resolve(path, roots))]
    assert not broken


def test_every_public_method_implements_an_operation_or_is_a_known_helper() -> None:
    roots = _roots()
    unexplained = sorted(_public_methods(roots) - set(OPERATIONS.values()) - HELPERS)
    assert not unexplained, f"public methods mapped to no operation: {', '.join(unexplained)}"


def test_help_and_the_readme_name_every_method() -> None:
    """``help(warren.Client)`` and the README's table list every service and each of its calls."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    doc = inspect.getdoc(warren.Client) or ""
    client = _roots()["client"]
    services = {name: value for name, value in vars(client).items() if not name.startswith("_")}
    assert {"events", "webhooks"} <= set(services)
    for name, service in services.items():
        assert f"``{name}``" in doc, f"help(warren.Client) does not list {name}"
        row = next((line for line in readme.splitlines() if line.startswith(f"| `client.{name}` |")), "")
        assert row, f"the README's table has no row for client.{name}"
        methods = [m for m, _ in inspect.getmembers(service, inspect.ismethod) if not m.startswith("_")]
        line = next(line for line in doc.splitlines() if f"``{name}``:" in line)
        following = doc[doc.index(line) :].split("\n- ")[0]
        for method in methods:
            assert f"``{method}``" in following, f"help(warren.Client) does not list {name}.{method}"
            assert f"`{method}(" in row, f"the README's row for client.{name} does not list {method}"
