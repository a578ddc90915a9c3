from __future__ import annotations

from typing import Optional

from ._config import setting
from ._http import OwnsConnections, Transport
from .resources.devices import Devices
from .resources.keys import Keys
from .resources.events import Events
from .resources.logs import Logs
from .resources.webhooks import Webhooks
from .resources.network import NetworkInfo
from .resources.policy import PolicyApi
from .resources.routes import Routes
from .resources.users import Users


class Client(OwnsConnections):
    """The Warren management API, authenticated with an API key.

    ``url`` (the server, with or without ``/v1``) and ``api_key`` default to ``WARREN_URL`` and
    ``WARREN_API_KEY``. ``timeout`` bounds the connect and every read of a call, in seconds.
    A 429 is waited out (``Retry-After``, at most ``max_retry_wait`` seconds) and retried up to
    ``max_retries`` times, whatever the method: Warren refuses it before doing anything, so a
    create or an update sent again cannot happen twice. ``max_retries=0`` turns this off; the
    ``POST`` and ``PATCH`` calls that change something take ``retry=False`` for one call.
    Connections are kept alive and shared by threads;
    ``close()`` (or leaving a ``with`` block) closes them.

    The calls, by attribute:

    - ``devices``: ``list``, ``page`` (a page at a time, searched), ``get``, ``delete``,
      ``set_tags``, ``update`` (key expiry), ``approve`` (a device waiting for approval), ``expire`` (end its login now)
    - ``users``: ``list``, ``create``, ``update``, ``delete``
    - ``network``: ``get`` (plan, limits, usage), ``update`` (device approval, key expiry),
      ``me``, ``sso``, ``set_sso``
    - ``policy``: ``get``, ``get_text``, ``set``, ``validate``, ``history``, ``version``
    - ``keys``: ``list``, ``create``, ``get``, ``delete`` (auth keys and API keys)
    - ``routes``: ``list``, ``approve``, ``disable``
    - ``logs``: ``connections`` and ``audit`` (iterators), ``connections_page``, ``audit_page``
    - ``events``: ``list`` (an iterator, ``follow=True`` tails it), ``page``
    - ``webhooks``: ``list``, ``create``, ``get``, ``update``, ``delete``, ``rotate``, ``test``,
      ``deliveries`` (an iterator), ``deliveries_page``, ``retry``

    Refusals raise ``WarrenError`` or one of its subclasses (``NotFoundError``,
    ``RateLimitedError``, ...); network failures raise ``WarrenConnectionError``.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        user_agent: Optional[str] = None,
    ) -> None:
        self._http = Transport(
            setting(url, "WARREN_URL", "server URL"),
            setting(api_key, "WARREN_API_KEY", "API key"),
            timeout=timeout,
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            user_agent=user_agent,
        )
        self.devices = Devices(self._http)
        self.users = Users(self._http)
        self.network = NetworkInfo(self._http)
        self.policy = PolicyApi(self._http)
        self.keys = Keys(self._http)
        self.routes = Routes(self._http)
        self.logs = Logs(self._http)
        self.events = Events(self._http)
        self.webhooks = Webhooks(self._http)

    @property
    def url(self) -> str:
        """The server's base URL, without a trailing slash or ``/v1``."""
        return self._http.base_url

    def __repr__(self) -> str:
        return f"warren.Client({self.url!r})"
