"""Every paged log (events, connections, audit) pages, resumes and tails through the one
implementation in ``warren.paging``: the same checks run against each of them, so a pager that
drifts from the others fails here."""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, NamedTuple, Tuple

import pytest

import warren

from .conftest import Enroll, Server, next_within, unique
from .test_logs import _report


class Pager(NamedTuple):
    name: str
    #: client -> the iterator method and the one-page method of the same log.
    methods: Callable[[warren.Client], Tuple[Callable[..., warren.LogIterator[Any]], Callable[..., warren.Page[Any]]]]


PAGERS = [
    Pager("events", lambda c: (c.events.list, c.events.page)),
    Pager("connections", lambda c: (c.logs.connections, c.logs.connections_page)),
    Pager("audit", lambda c: (c.logs.audit, c.logs.audit_page)),
]


@pytest.fixture
def filters(server: Server, client: warren.Client, enroll: Enroll) -> Dict[str, Dict[str, Any]]:
    """Three fresh entries in each log and, per log, the filter that selects only entries no
    read of a log adds to (reading the audit log is itself audited)."""
    node, registration = enroll()
    _report(node, registration, 3)
    audited = client.keys.create(type="api", name=unique("paged"), scopes=["read"], expires_in="1h")
    assert audited.key is not None
    with warren.Client(server.url, audited.key) as caller:
        for _ in range(3):
            caller.network.get()
    return {
        "events": {"types": ["key.*"]},
        "connections": {"device": registration.device.id},
        "audit": {"key": audited.id},
    }


@pytest.mark.parametrize("pager", PAGERS, ids=lambda p: p.name)
def test_the_iterator_yields_exactly_the_pages_one_after_another(
    client: warren.Client, filters: Dict[str, Dict[str, Any]], pager: Pager
) -> None:
    entries, page = pager.methods(client)
    only = filters[pager.name]
    pages = [page(since="1h", limit=2, **only)]
    while pages[-1].has_more:
        pages.append(page(cursor=pages[-1].next_cursor, limit=2, **only))
    expected = [entry for p in pages for entry in p.entries]
    assert len(expected) >= 3 and len(pages) >= 2

    iterator = entries(since="1h", limit=2, **only)
    assert list(iterator) == expected
    # Its cursor continues after the last page it read: nothing new, nothing again.
    assert iterator.cursor == pages[-1].next_cursor
    assert list(entries(cursor=iterator.cursor, **only)) == []


@pytest.mark.parametrize("pager", PAGERS, ids=lambda p: p.name)
def test_since_and_cursor_together_are_refused_before_any_call(client: warren.Client, pager: Pager) -> None:
    entries, _ = pager.methods(client)
    with pytest.raises(ValueError, match="since or cursor"):
        entries(since="1h", cursor="anything")


def test_events_filter_by_family_and_tail_what_arrives(client: warren.Client) -> None:
    created = client.keys.create(type="api", name=unique("evented"), scopes=["read"], expires_in="1h")
    keys = list(client.events.list(types=["key.*"], since="1h"))
    assert keys and all(event.type.startswith("key.") for event in keys)
    assert any(event.type == "key.created" and event.data["key"]["id"] == created.id for event in keys)
    assert all(not event.type.startswith("key.") for event in client.events.page(types=["policy.updated"]).entries)

    now = client.events.page(since="1h", limit=1000).next_cursor
    tail = client.events.list(types=["key.deleted"], cursor=now, follow=True, poll_interval=0.1)
    threading.Timer(0.3, client.keys.delete, (created.id,)).start()
    deleted = next_within(tail)
    tail.close()
    assert deleted.type == "key.deleted" and deleted.actor.type == "key"
    seen: List[warren.Event] = list(tail)
    assert seen == []
