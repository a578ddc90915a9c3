"""Turns the API's camelCase JSON into the frozen dataclasses of ``models``.

Each record's fields are read by reflection on its type hints, so a record is declared once.
Fields a newer server adds are ignored; a field the record requires but the answer lacks,
or a value of the wrong JSON type, is a WarrenError ``invalid_response``.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Dict, Literal, Mapping, Tuple, Type, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from .errors import invalid_response

T = TypeVar("T")

_FRACTION = re.compile(r"\.(\d+)")


def json_name(name: str) -> Dict[str, str]:
    """Field metadata naming the JSON key when it is not the camelCase of the field's name."""
    return {"json": name}


def parse_time(value: str) -> datetime:
    """An RFC 3339 time as an aware UTC datetime (3.9's fromisoformat knows neither ``Z`` nor milliseconds)."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    text = _FRACTION.sub(lambda match: "." + match.group(1)[:6].ljust(6, "0"), text, count=1)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise invalid_response(f"not an RFC 3339 time: {value!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def format_time(value: datetime) -> str:
    """An aware datetime as RFC 3339 UTC with milliseconds (a naive one is taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def decode(cls: Type[T], data: Any) -> T:
    """One record of type ``cls`` (a dataclass) from its JSON object."""
    if not isinstance(data, dict):
        raise invalid_response(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    kwargs: Dict[str, Any] = {}
    for field, key, hint, required in _fields(cast(type, cls)):
        if key in data:
            kwargs[field] = _convert(hint, data[key], f"{cls.__name__}.{key}")
        elif required:
            raise invalid_response(f"{cls.__name__}: the answer has no {key!r}")
    return cast(Any, cls)(**kwargs)  # type: ignore[no-any-return]


def decode_list(cls: Type[T], data: Any, envelope: str) -> Tuple[T, ...]:
    """The records of a list answer such as ``{"devices": [...]}``."""
    items = data.get(envelope) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise invalid_response(f"expected {{{envelope!r}: [...]}}")
    return tuple(decode(cls, item) for item in items)


@lru_cache(maxsize=None)
def _fields(cls: type) -> Tuple[Tuple[str, str, Any, bool], ...]:
    hints = get_type_hints(cls)
    return tuple(
        (
            field.name,
            field.metadata.get("json") or _camel(field.name),
            hints[field.name],
            field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING,
        )
        for field in dataclasses.fields(cls)
    )


def _camel(name: str) -> str:
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part.title() for part in rest)


def _convert(hint: Any, value: Any, where: str) -> Any:
    origin = get_origin(hint)
    if origin is Union:
        if value is None:
            return None
        inner = [arg for arg in get_args(hint) if arg is not type(None)]
        return _convert(inner[0], value, where)
    if origin is tuple:
        if not isinstance(value, list):
            raise invalid_response(f"{where}: expected a list")
        return tuple(_convert(get_args(hint)[0], item, where) for item in value)
    if origin in (dict, Mapping):
        # A map of typed values (split DNS: domain -> nameservers) is converted value by value;
        # a free-form one (Dict[str, Any]) is passed as it is.
        value_hint = get_args(hint)[1] if len(get_args(hint)) == 2 else Any
        if value_hint is Any:
            return value
        if not isinstance(value, dict):
            raise invalid_response(f"{where}: expected an object")
        return {key: _convert(value_hint, item, f"{where}.{key}") for key, item in value.items()}
    if hint is Any:
        return value
    if origin is Literal:
        # An enumeration: its type is checked, not its value, so a state a newer server adds
        # reaches the caller instead of failing the whole answer.
        kinds = {type(arg) for arg in get_args(hint)}
        if not isinstance(value, tuple(kinds)):
            raise invalid_response(f"{where}: expected one of {', '.join(map(repr, get_args(hint)))}")
        return value
    if hint is datetime:
        if not isinstance(value, str):
            raise invalid_response(f"{where}: expected a time")
        return parse_time(value)
    if dataclasses.is_dataclass(hint):
        return decode(cast(type, hint), value)
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(hint, type) and not (isinstance(value, hint) and (hint is bool or not isinstance(value, bool))):
        raise invalid_response(f"{where}: expected {hint.__name__}, got {type(value).__name__}")
    return value
