"""Warren: a typed client for the Warren management API and node protocol.

    import warren

    with warren.Client() as client:  # WARREN_URL, WARREN_API_KEY
        for device in client.devices.list(online=True):
            print(device.name, device.last_seen)
"""

from ._version import __version__
from .client import Client
from .errors import PolicyError, WarrenError
from .models import (
    AuditEntry,
    ConnectionEntry,
    ConnectionReport,
    Device,
    DeviceRoute,
    Endpoint,
    Event,
    EventActor,
    Heartbeat,
    Key,
    Netmap,
    Me,
    MeKey,
    MeNetwork,
    Network,
    NetworkLimits,
    NetworkUsage,
    SSO,
    Page,
    Peer,
    Policy,
    PolicyTestResult,
    PolicyText,
    PolicyVersion,
    Registration,
    Route,
    User,
    UserRef,
    ValidationResult,
    Webhook,
    WebhookDelivery,
)
from .node import NodeClient
from .paging import LogIterator

__all__ = [
    "AuditEntry",
    "Client",
    "ConnectionEntry",
    "ConnectionReport",
    "Device",
    "DeviceRoute",
    "Endpoint",
    "Event",
    "EventActor",
    "Heartbeat",
    "Key",
    "LogIterator",
    "Netmap",
    "Me",
    "MeKey",
    "MeNetwork",
    "Network",
    "SSO",
    "NetworkLimits",
    "NetworkUsage",
    "NodeClient",
    "Page",
    "Peer",
    "Policy",
    "PolicyError",
    "PolicyTestResult",
    "PolicyText",
    "PolicyVersion",
    "Registration",
    "Route",
    "User",
    "UserRef",
    "ValidationResult",
    "Webhook",
    "WebhookDelivery",
    "WarrenError",
    "__version__",
]
