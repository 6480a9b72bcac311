"""Values that keep their identity across the sandbox boundary: a call's arguments and what comes back (stdlib only).

A test and the program share objects upstream (one process): an inner list the test kept sees the program's append,
a list passed twice is one list, `f(x) is x` holds. The judge numbers every mutable container it sends
(`MUTABLE_TYPES`) and sends each once in an object table, as `{"$ref": n}` wherever it recurs (aliasing and cycles
cross as they are); the job rebuilds the graph, calls, and sends back the entries of the objects the call changed
and of the new ones they reach; the judge updates its own objects in place (`update`). The value is tagged as the
codec tags it, with a ref for each numbered object in it (`encode_value`). Everything else is tagged by `codec.py`
within its bounds (depth counted through refs as first met); decoding a table needs no recursion through refs.
"""

from __future__ import annotations

import base64
import collections
from collections.abc import Callable, Iterable
from typing import Any

from audit_lib.sandbox import codec
from audit_lib.sandbox.factories import defaultdict_parts, encode_factory
from audit_lib.sandbox.nesting import MAX_DEPTH, depth_room
from audit_lib.sandbox.value_errors import MalformedTaggedValue, Unserializable
from audit_lib.sandbox.value_errors import type_name as _type_name
# Bound here, not looked up in builtins at each use: the code under test may rebind builtins in the job.
from builtins import (  # noqa: A004
    BaseException, all, any, bytearray, bytes, dict, enumerate, id, int, isinstance, len, list, map, next, range, set,
    sorted, str, tuple, type,
)

REF_TAG = "$ref"
REMOTE_TAG = "$remote"
_OrderedDict, _Counter, _defaultdict = collections.OrderedDict, collections.Counter, collections.defaultdict
MUTABLE_TYPES = frozenset({list, dict, set, bytearray, _OrderedDict, _Counter, _defaultdict})
_MAPPING_TAGS = {_OrderedDict: "$ordereddict", _Counter: "$counter"}
_dict_clear, _dict_update, _set_clear, _set_update = dict.clear, dict.update, set.clear, set.update


class ObjectGraph:
    """The mutable containers one side sent or received for one call, by number, and how to tag values around them.

    `objects[n]` is object n itself (kept alive here, so no `id` is reused while it is numbered); `entries[n]` its
    contents as sent (`None` until encoded). `remote_of(value)` returns a handle number for a value that stays in the
    job (the judge's stubs) or None; `resolve_remote(n)` gives the job's object for one."""

    def __init__(self, objects: Iterable[object] = (), *, remote_of: Callable[[Any], int | None] | None = None,
                 resolve_remote: Callable[[int], Any] | None = None) -> None:
        self.objects: list[object] = list(objects)
        self.entries: list[Any] = [None] * len(self.objects)
        self._numbers: dict[int, int] = {id(obj): n for n, obj in enumerate(self.objects)}
        self._remote_of = remote_of
        self._resolve_remote = resolve_remote
        self._inline = self._referred = False

    # ------------------------------------------------------------------ encoding

    def encode(self, value: Any) -> Any:
        """`value` tagged, each mutable container in it numbered (and encoded, when new) and sent as a ref.

        On `Unserializable` the objects this call numbered are forgotten again: the table stays as it was."""
        mark = len(self.objects)
        try:
            with depth_room():
                return self._encode(value, 0)
        except BaseException:
            self._forget_from(mark)
            raise

    def encode_entry(self, number: int) -> Any:
        """The contents of object `number` (one numbered before, e.g. received), encoded now into `entries`."""
        mark = len(self.objects)
        try:
            with depth_room():
                self.entries[number] = self._contents(self.objects[number], 0)
        except BaseException:
            self._forget_from(mark)
            raise
        return self.entries[number]

    def encode_value(self, value: Any) -> tuple[Any, bool]:
        """`value` tagged as the codec tags it, but each object numbered here sent as a ref; and whether one was.

        Containers not numbered yet are sent inline, not numbered: a value's own aliasing (`[row] * 3`) is not kept,
        and costs no more than the codec's encoding."""
        self._inline, self._referred = True, False
        try:
            return self.encode(value), self._referred
        finally:
            self._inline = False

    def _forget_from(self, mark: int) -> None:
        for obj in self.objects[mark:]:
            del self._numbers[id(obj)]
        del self.objects[mark:]
        del self.entries[mark:]

    def _encode(self, value: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise Unserializable(_type_name(value), f"nested deeper than {MAX_DEPTH}")
        cls = type(value)
        if cls in MUTABLE_TYPES:
            number = self._numbers.get(id(value))
            if number is None and self._inline:
                if cls is list:  # the codec's list, here: the common case, without a call more per list
                    kinds = set(map(type, value))
                    if kinds <= codec.JSON_LEAVES and len(value) < codec.PACK_FLOATS_FROM \
                            and codec._flat_json_safe(value, kinds):
                        return value
                return self._contents(value, depth)
            if number is None:
                number = len(self.objects)
                self._numbers[id(value)] = number
                self.objects.append(value)
                self.entries.append(None)
                self.entries[number] = self._contents(value, depth)
            self._referred = True
            return {REF_TAG: number}
        if cls is tuple:
            return {"$tuple": list(value) if codec._flat_json_safe(value) else
                    [self._encode(item, depth + 1) for item in value]}
        if self._remote_of is not None:
            handle = self._remote_of(value)
            if handle is not None:
                return {REMOTE_TAG: handle}
        return codec._encode(value, depth)

    def _contents(self, value: Any, depth: int) -> Any:
        """A numbered object's entry: its items, each mutable one a ref."""
        cls = type(value)
        if cls is list:
            kinds = set(map(type, value))
            packed = codec._packed_floats(value, kinds)
            if packed is not None:
                return packed
            return value if codec._flat_json_safe(value, kinds) else \
                [self._encode(item, depth + 1) for item in value]
        if cls is set:
            return {"$set": [codec._encode(item, depth + 1) for item in value]}
        if cls is bytearray:
            return {"$bytearray": base64.b64encode(bytes(value)).decode("ascii")}
        pairs = value.items()  # an exact type's own method: an OrderedDict's order is its own, not the dict's
        if cls is dict and all(type(k) is str and not k.startswith("$") for k in value):
            return {k: self._encode(v, depth + 1) for k, v in pairs}
        encoded = [[codec._encode(k, depth + 1), self._encode(v, depth + 1)] for k, v in pairs]
        if cls is _defaultdict:
            return {"$defaultdict": [encode_factory(value.default_factory), encoded]}
        return {_MAPPING_TAGS.get(cls, "$dict"): encoded}

    # ------------------------------------------------------------------ decoding

    def receive(self, entries: Any) -> None:
        """Rebuild a table as sent (the job's side): every object, then every object's contents."""
        if not isinstance(entries, list) or self.objects:
            raise MalformedTaggedValue("an object table needs a list of entries, received once")
        self.update([[n, entry] for n, entry in enumerate(entries)])

    def update(self, changed: Any) -> None:
        """Apply `[[n, entry], ...]`: new numbers (the next ones, in order) are made, known ones updated in place.

        Every entry is decoded before any object changes, so a malformed answer changes nothing."""
        if not isinstance(changed, list) or not all(isinstance(p, list) and len(p) == 2 for p in changed):
            raise MalformedTaggedValue("an object update needs a list of [number, entry] pairs")
        known = len(self.objects)
        new = sorted(n for n, _entry in changed if type(n) is int and n >= known)
        if new != list(range(known, known + len(new))) or len({n for n, _ in changed}) != len(changed) \
                or any(type(n) is not int or n < 0 for n, _entry in changed):
            raise MalformedTaggedValue("object numbers must be known ones or the next ones, each once")
        kinds = {n: _entry_kind(entry) for n, entry in changed}
        for n, _entry in changed:
            if n < known and kinds[n] is not type(self.objects[n]):
                raise MalformedTaggedValue(f"object {n} is a {type(self.objects[n]).__name__}, not a "
                                           f"{kinds[n].__name__}")
        for n in new:
            shell = _shell(kinds[n], changed, n)
            self._numbers[id(shell)] = n
            self.objects.append(shell)
            self.entries.append(None)
        with depth_room():
            contents = [(self.objects[n], self._decoded_contents(kinds[n], entry)) for n, entry in changed]
        for target, items in contents:
            _refill(target, items)
        for n, entry in changed:
            self.entries[n] = entry

    def decode(self, obj: Any) -> Any:
        """A tagged value whose refs stand for this table's objects."""
        with depth_room():
            return self._decode(obj)

    def _decode(self, obj: Any) -> Any:
        cls = type(obj)
        if cls is dict and len(obj) == 1:
            (key,) = obj
            payload = obj[key]
            if key == REF_TAG:
                if type(payload) is not int or not 0 <= payload < len(self.objects):
                    raise MalformedTaggedValue(f"no object {payload!r:.40}")
                return self.objects[payload]
            if key == "$tuple":
                if not isinstance(payload, list):
                    raise MalformedTaggedValue("$tuple needs a list")
                return tuple(self._decode(item) for item in payload)
            if key == REMOTE_TAG and self._resolve_remote is not None:
                return self._resolve_remote(payload)
            if key in ("$dict", "$ordereddict", "$counter", "$defaultdict"):
                kind = _entry_kind(obj)
                made = _shell(kind, [[0, obj]], 0)
                _refill(made, self._decoded_contents(kind, obj))
                return made
        if cls is list:
            return obj if set(map(type, obj)) <= codec.JSON_LEAVES else [self._decode(item) for item in obj]
        if cls is dict and not any(k.startswith("$") for k in obj):
            return {k: self._decode(v) for k, v in obj.items()}
        return codec._decode(obj)

    def _decoded_contents(self, kind: type, entry: Any) -> Any:
        """What an entry holds, decoded: items for a list or set, bytes for a bytearray, pairs for a mapping."""
        if kind is list:
            if isinstance(entry, dict):
                return codec.decode_scalar_tag("$f64", entry["$f64"])
            return [self._decode(item) for item in entry]
        if kind is set:
            return codec._decode(entry)
        if kind is bytearray:
            return codec.decode_scalar_tag("$bytearray", entry["$bytearray"])
        if len(entry) == 1:
            (key,) = entry
            if key.startswith("$"):
                pairs = entry[key][1] if key == "$defaultdict" else entry[key]
                if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                    raise MalformedTaggedValue("a mapping entry needs a list of [key, value] pairs")
                return [(codec._decode(k), self._decode(v)) for k, v in pairs]
        return [(k, self._decode(v)) for k, v in entry.items()]


def _entry_kind(entry: Any) -> type:
    """The type of the object an entry describes."""
    if type(entry) is list:
        return list
    if type(entry) is not dict:
        raise MalformedTaggedValue("an object entry is a list or an object")
    if len(entry) == 1:
        (key,) = entry
        if key == "$f64":
            return list
        kind = {"$set": set, "$bytearray": bytearray, "$dict": dict, "$ordereddict": _OrderedDict,
                "$counter": _Counter, "$defaultdict": _defaultdict}.get(key)
        if kind is not None:
            return kind
        if key.startswith("$"):
            raise MalformedTaggedValue(f"{key!r:.40} does not describe a mutable object")
    if any(k.startswith("$") for k in entry):
        raise MalformedTaggedValue("a plain object may not have keys starting with '$'")
    return dict


def _shell(kind: type, changed: list, number: int) -> Any:
    """An empty object of `kind` (a defaultdict with the factory its entry names)."""
    if kind is _defaultdict:
        entry = next(entry for n, entry in changed if n == number)
        factory, _pairs = defaultdict_parts(entry["$defaultdict"])
        return _defaultdict(factory)
    return kind()


def _refill(target: Any, items: Any) -> None:
    """`target` made to hold `items`, in place (dict's and set's own methods: a Counter's `update` would add)."""
    cls = type(target)
    if cls is list or cls is bytearray:
        target[:] = items
    elif cls is _OrderedDict:  # its own order lives beside the dict's: dict.clear would leave it stale
        target.clear()
        target.update(items)
    elif cls is set:
        _set_clear(target)
        _set_update(target, items)
    else:
        _dict_clear(target)
        _dict_update(target, items)

