"""JSON wire forms for every record: ``to_wire`` and ``from_wire``.

Records are frozen dataclasses; their wire form is a JSON object with one key per field.
A union of records is *tagged*: ``register_tagged`` names the key (``"type"`` or
``"kind"``) and the tag of each member. Enums travel as their string values, tuples as
lists. Decoding is strict: a missing field, a wrong type or an unknown tag raises
:class:`~coderooms.errors.WireError`. Only a field declared with :func:`wire_default`
(the seeds' ``#[serde(default)]``) may be absent from a payload.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any

from coderooms.errors import WireError

_WIRE_DEFAULT = "coderooms.wire_default"
_WIRE_OMIT_DEFAULT = "coderooms.wire_omit_default"

# tagged unions: frozenset of member classes -> (tag key, {tag: class})
_UNIONS: dict[frozenset[type], tuple[str, dict[str, type]]] = {}
# member class -> (tag key, tag value)
_MEMBER_TAGS: dict[type, tuple[str, str]] = {}
_HINTS: dict[type, dict[str, Any]] = {}


def wire_default(
    *, default: Any = dataclasses.MISSING, default_factory: Any = dataclasses.MISSING
) -> Any:
    """A dataclass field that may be absent from an older payload (decoded as its default)."""
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata={_WIRE_DEFAULT: True})
    return dataclasses.field(default=default, metadata={_WIRE_DEFAULT: True})


def wire_omit_default(*, default: Any) -> Any:
    """A dataclass field left out of the wire form while it holds ``default`` (and decoded
    as ``default`` when absent), like serde's ``skip_serializing_if`` + ``default``."""
    return dataclasses.field(
        default=default, metadata={_WIRE_DEFAULT: True, _WIRE_OMIT_DEFAULT: True}
    )


def register_tagged(key: str, members: Mapping[str, type]) -> None:
    """Declare a tagged union: ``members`` maps each tag value to its record class."""
    table = dict(members)
    _UNIONS[frozenset(table.values())] = (key, table)
    for tag, cls in table.items():
        _MEMBER_TAGS[cls] = (key, tag)


def to_wire(obj: Any) -> Any:
    """The JSON-ready form of a record, enum, tuple or scalar."""
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, tuple | list):
        return [to_wire(item) for item in obj]
    if isinstance(obj, Mapping):
        return {str(k): to_wire(v) for k, v in obj.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        tag = _MEMBER_TAGS.get(type(obj))
        if tag is not None:
            out[tag[0]] = tag[1]
        for f in dataclasses.fields(obj):
            if f.name.startswith("_"):
                continue
            value = getattr(obj, f.name)
            if f.metadata.get(_WIRE_OMIT_DEFAULT) and value == f.default:
                continue
            out[f.name] = to_wire(value)
        return out
    raise TypeError(f"{type(obj).__name__} has no wire form")


def from_wire(tp: Any, data: Any) -> Any:
    """Decode ``data`` as ``tp`` (a record class, a tagged union, or a typing form)."""
    return _decode(tp, data, "$")


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = hints
    return hints


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp)


def _fail(path: str, message: str) -> WireError:
    return WireError(f"{path}: {message}")


def _decode(tp: Any, data: Any, path: str) -> Any:
    if tp is Any:
        return data
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return _decode_union(typing.get_args(tp), data, path)
    if origin is typing.Literal:
        allowed = typing.get_args(tp)
        if data not in allowed or isinstance(data, bool) != any(
            isinstance(a, bool) for a in allowed
        ):
            raise _fail(path, f"expected one of {list(allowed)!r}, got {data!r}")
        return data
    if origin in (tuple, list):
        if not isinstance(data, list):
            raise _fail(path, f"expected a list, got {type(data).__name__}")
        args = typing.get_args(tp)
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(data):
                raise _fail(path, f"expected {len(args)} items, got {len(data)}")
            return tuple(
                _decode(a, v, f"{path}[{i}]")
                for i, (a, v) in enumerate(zip(args, data, strict=True))
            )
        item = args[0] if args else Any
        items = [_decode(item, v, f"{path}[{i}]") for i, v in enumerate(data)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(data, dict):
            raise _fail(path, f"expected an object, got {type(data).__name__}")
        kt, vt = typing.get_args(tp) or (str, Any)
        return {_decode(kt, k, path): _decode(vt, v, f"{path}.{k}") for k, v in data.items()}
    if isinstance(tp, type):
        members = _UNIONS.get(frozenset({tp}))
        registered = _find_union_for_base(tp)
        if registered is not None:
            return _decode_tagged(registered, data, path)
        if members is None and tp in _MEMBER_TAGS and dataclasses.is_dataclass(tp):
            return _decode_record(tp, data, path, expect_tag=_MEMBER_TAGS[tp])
        if issubclass(tp, enum.Enum):
            try:
                return tp(data)
            except ValueError:
                raise _fail(path, f"unknown {_type_name(tp)} value {data!r}") from None
        if tp is bool:
            if not isinstance(data, bool):
                raise _fail(path, f"expected a boolean, got {data!r}")
            return data
        if tp is int:
            if isinstance(data, bool) or not isinstance(data, int):
                raise _fail(path, f"expected an integer, got {data!r}")
            return data
        if tp is float:
            if isinstance(data, bool) or not isinstance(data, int | float):
                raise _fail(path, f"expected a number, got {data!r}")
            return float(data)
        if tp is str:
            if not isinstance(data, str):
                raise _fail(path, f"expected a string, got {data!r}")
            return data
        if dataclasses.is_dataclass(tp):
            return _decode_record(tp, data, path, expect_tag=None)
    if tp is type(None):
        if data is not None:
            raise _fail(path, f"expected null, got {data!r}")
        return None
    raise TypeError(f"no wire decoder for {tp!r}")


def _find_union_for_base(tp: type) -> tuple[str, dict[str, type]] | None:
    """A registered union whose members all derive from ``tp`` (tp is their base class)."""
    for members, spec in _UNIONS.items():
        if tp not in members and all(issubclass(m, tp) for m in members):
            return spec
    return None


def _decode_union(args: tuple[Any, ...], data: Any, path: str) -> Any:
    non_none = tuple(a for a in args if a is not type(None))
    if len(non_none) < len(args) and data is None:
        return None
    spec = _UNIONS.get(frozenset(non_none))
    if spec is not None:
        return _decode_tagged(spec, data, path)
    if len(non_none) == 1:
        return _decode(non_none[0], data, path)
    errors = []
    for option in non_none:
        try:
            return _decode(option, data, path)
        except WireError as err:
            errors.append(str(err))
    raise _fail(path, "matches none of " + ", ".join(_type_name(a) for a in non_none))


def _decode_tagged(spec: tuple[str, dict[str, type]], data: Any, path: str) -> Any:
    key, table = spec
    if not isinstance(data, dict):
        raise _fail(path, f"expected an object, got {type(data).__name__}")
    if key not in data:
        raise _fail(path, f"missing tag field {key!r}")
    tag = data[key]
    cls = table.get(tag) if isinstance(tag, str) else None
    if cls is None:
        raise _fail(path, f"unknown {key} {tag!r} (expected one of {sorted(table)})")
    return _decode_record(cls, data, path, expect_tag=(key, tag))


def _decode_record(cls: type, data: Any, path: str, expect_tag: tuple[str, str] | None) -> Any:
    if not isinstance(data, dict):
        raise _fail(path, f"expected an object for {cls.__name__}, got {type(data).__name__}")
    if expect_tag is not None and data.get(expect_tag[0]) != expect_tag[1]:
        raise _fail(
            path, f"expected {expect_tag[0]} {expect_tag[1]!r}, got {data.get(expect_tag[0])!r}"
        )
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name.startswith("_"):
            continue
        if f.name not in data:
            if f.metadata.get(_WIRE_DEFAULT):
                continue
            raise _fail(path, f"missing field {f.name!r} of {cls.__name__}")
        kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{path}.{f.name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as err:
        raise _fail(path, f"invalid {cls.__name__}: {err}") from None
