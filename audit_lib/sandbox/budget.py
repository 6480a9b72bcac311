"""Bounded decoding of values sent by a sandboxed child: the parent's work per job has a ceiling.

`sandbox_codec.decode` trusts its input's shape. A hostile child can instead send values that are cheap to encode
and expensive to decode: sets or dicts whose keys all share one hash (each insertion compares with every earlier
key, so decoding is quadratic), tiny tokens that become large objects (`{"$set":[]}` is 12 bytes of text and about
450 bytes of parsed and decoded objects), huge ints, or deep nesting. `JobDecoder` decodes one job's result lines
under a `DecodeBudget` and raises `BudgetExceeded` for the one value that goes over; the caller records that input
as refused and carries on with the others.
"""

from __future__ import annotations

import collections
import fractions
import json
import sys
import time
from typing import Any, NamedTuple

# Imported here, not where it is used: the sandbox's judges use this module where the project is out of reach.
from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.codec import (
    JSON_LEAVES,
    MAX_DEPTH,
    SCALAR_TAGS,
    MalformedTaggedValue,
    decode_scalar_tag,
    defaultdict_parts,
)
from audit_lib.sandbox.nesting import depth_room

# Parsed-plus-decoded bytes per byte of JSON text and per container token: a generous upper estimate of what
# json.loads and the decoding allocate (measured: `[],` ~64 B per list, `{"$set":[]},` ~460 B, `"ab",` ~10x).
BYTES_PER_TEXT_BYTE = 4
BYTES_PER_LIST_TOKEN = 64
BYTES_PER_OBJECT_TOKEN = 480
# Each element (a comma) holds at least a pointer and, unless a cached small int, an object of ~24-28 bytes; each
# string (two quotes) a str object of ~50 bytes besides its text: a list of 2-character strings parses to ~14 bytes
# per text byte, which the per-byte figure alone misses (6 such lines of the attack corpus hold 5 GB).
BYTES_PER_ELEMENT = 24
BYTES_PER_STRING = 56
DIGITS_PER_INT_BIT = 0.30103  # log10(2)
# What one small-key comparison's time (~18 ns) compares of two long keys that share a hash, with room to spare
# (measured: ~765 bits of two ints; 85-360 characters of two str, 4-byte ones the slowest).
BITS_PER_COMPARISON = 512
CHARS_PER_COMPARISON = 64
BYTES_PER_PACKED_CHAR_EXTRA = 1
# The most of a preview (a value's start, `call_function(values="preview")`) the parent keeps.
PREVIEW_MAX_CHARS = 4000


class DecodeBudget(NamedTuple):
    """The parent's ceiling for decoding one job's values.

    The default decoded-size budget leaves room for the largest honest job we know (HumanEval+'s HumanEval/130
    plus split: 124 MB of encoded floats), and stops a 512 MB result of tiny containers long before it expands
    to ~20 GB. `max_int_bits` stays far above the largest honest int (HumanEval+ has outputs of 116,000 bits,
    beyond Python's 4,300-digit str() limit: such ints are decoded from hex, which that limit does not cover).
    """

    max_decoded_bytes: int = 1536 * 1024 * 1024
    max_depth: int = MAX_DEPTH
    max_int_bits: int = 1 << 22
    # Keys whose hash repeats an earlier key's hash, per set or dict: each costs a compare per colliding key.
    max_repeated_hashes: int = 1024
    # Element comparisons that building the job's sets and dicts takes among keys that share a hash (each pair of a
    # group compared, element by element for tuple keys), over all of the job's values: ~0.1 s of the parent's time.
    max_collision_work: int = 4_000_000
    # CPU seconds (of the decoding thread) the job's values may take to parse and decode, all together: checked
    # before each value is parsed and every `CPU_CHECK_EVERY` containers while one is decoded. HumanEval+'s
    # largest honest job decodes in about a second.
    max_cpu_s: float = 10.0
    # Lists and objects in one value's text, counted before it is parsed: `json.loads` builds each in C, where no
    # timer interrupts it (20M nested lists took ~20 s); 8M take about 4 s.
    max_containers: int = 8_000_000
    # What a job's decoded values may hold in the parent (estimated as `max_decoded_bytes` is): a value past it
    # stays the tagged JSON its job sent (`EncodedValue`), decoded only when asked, so results a caller keeps cost
    # their encoded size. HumanEval+'s outputs are far smaller, bar a few canonical outputs of the largest inputs.
    max_kept_bytes: int = 64 * 1024 * 1024


CPU_CHECK_EVERY = 4096


class BudgetExceeded(Exception):
    """One value is over the decode budget; `reason` says which limit."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EncodedValue:
    """A call's value kept as the tagged JSON its job sent; `decode()` builds it, within a fresh `DecodeBudget`.

    What `call_function(values="decoded")` returns for a value past the job's `DecodeBudget.max_kept_bytes`. Equal
    to another by its text only; its repr names its size, never its content."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = bytes(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EncodedValue) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"<EncodedValue of {len(self.text):,} bytes>"

    def tagged(self) -> Any:
        """The parsed tagged JSON (no values built): what a judge or a cache takes."""
        with depth_room():
            return json.loads(self.text)

    def decode(self, budget: DecodeBudget | None = None) -> Any:
        """The value, decoded here within `budget` (raises `BudgetExceeded` over it)."""
        decoder = JobDecoder(budget)
        decoder.charge(self.text)
        with depth_room():
            return decoder.decode(json.loads(self.text))


def decoded(value: Any, budget: DecodeBudget | None = None) -> Any:
    """`value`, or the value an `EncodedValue` stands for (decoded within `budget`; `BudgetExceeded` over it)."""
    return value.decode(budget) if isinstance(value, EncodedValue) else value


def decoded_or_refusal(value: Any) -> tuple[Any, tuple[str, str] | None]:
    """`(decoded(value), None)`, or `(None, (error type, message))` when a kept value's decode is refused.

    `BudgetExceeded` over its own budget, `MalformedResult` when the text is not a tagged value: never a value."""
    try:
        return decoded(value), None
    except BudgetExceeded as exc:
        return None, ("BudgetExceeded", f"kept encoded, then refused when decoded: {exc.reason}")
    except (MalformedTaggedValue, ValueError, TypeError, RecursionError) as exc:
        return None, ("MalformedResult", f"kept encoded, then refused when decoded: {type(exc).__name__}: {exc}"[:500])


def estimated_decoded_bytes(text: bytes) -> int:
    """An upper estimate of the memory parsing and decoding `text` takes, computed at C speed without parsing."""
    return decode_estimate(text)[0]


def decode_estimate(text: bytes) -> tuple[int, int]:
    """(`estimated_decoded_bytes`, lists and objects in it): each token counted once."""
    lists, objects = text.count(b"["), text.count(b"{")
    return (BYTES_PER_TEXT_BYTE * len(text) + BYTES_PER_LIST_TOKEN * lists + BYTES_PER_OBJECT_TOKEN * objects
            + BYTES_PER_ELEMENT * text.count(b",") + BYTES_PER_STRING * (text.count(b'"') // 2)), lists + objects


class JobDecoder:
    """Decodes the values of one job, charging each against the job's `DecodeBudget`."""

    def __init__(self, budget: DecodeBudget | None = None) -> None:
        self.budget = budget or DecodeBudget()
        self.remaining_bytes = self.budget.max_decoded_bytes
        self.remaining_collision_work = self.budget.max_collision_work
        self.cpu_until = time.thread_time() + self.budget.max_cpu_s
        self.containers = 0

    def charge(self, text: bytes, estimate: tuple[int, int] | None = None) -> None:
        """Reserve the decode cost of one encoded value before it is parsed.

        Reserve the decode cost of one encoded value before it is parsed; raises when it does not fit (in the bytes
        left, or in the CPU time left). `estimate`: `decode_estimate(text)`, when the caller has it already.
        """
        self._check_cpu()
        cost, containers = estimate if estimate is not None else decode_estimate(text)
        if containers > self.budget.max_containers:
            raise BudgetExceeded(f"{containers:,} lists and objects in one value (limit "
                                 f"{self.budget.max_containers:,}): parsing them cannot be interrupted")
        self._reserve(cost, "decoding")

    def _check_cpu(self) -> None:
        if time.thread_time() > self.cpu_until:
            raise BudgetExceeded(f"decoding the job's values took more than its {self.budget.max_cpu_s:g} s of CPU")

    def _reserve(self, cost: int, what: str) -> None:
        if cost > self.remaining_bytes:
            raise BudgetExceeded(f"{what} needs about {cost:,} bytes; {max(self.remaining_bytes, 0):,} of the "
                                 f"job's {self.budget.max_decoded_bytes:,}-byte decode budget are left")
        self.remaining_bytes -= cost

    def decode(self, obj: Any) -> Any:
        """The value of parsed tagged JSON, like `sandbox_codec.decode`, within the depth/int/hash limits."""
        with depth_room():
            return self._decode(obj, 0)

    # ---- internals ----------------------------------------------------------------------------------------------

    def _decode(self, obj: Any, depth: int) -> Any:
        if depth > self.budget.max_depth:
            raise BudgetExceeded(f"nested deeper than {self.budget.max_depth}")
        cls = type(obj)
        if obj is None or cls in (bool, str, int, float):
            return obj
        self.containers += 1
        if not self.containers % CPU_CHECK_EVERY:
            self._check_cpu()
        if cls is list:
            if set(map(type, obj)) <= JSON_LEAVES:
                return obj
            return [self._decode(item, depth + 1) for item in obj]
        if cls is dict:
            if len(obj) == 1:
                (key,) = obj
                if key.startswith("$"):
                    return self._decode_tag(key, obj[key], depth)
            if any(k.startswith("$") for k in obj):
                raise MalformedTaggedValue("a plain object may not have keys starting with '$'")
            # str keys: their hashes are salted per process, so a child cannot make them collide here.
            return {k: self._decode(v, depth + 1) for k, v in obj.items()}
        raise MalformedTaggedValue(f"not a JSON value: {cls.__name__}")

    def _items(self, tag: str, payload: Any, depth: int) -> list[Any]:
        if not isinstance(payload, list):
            raise MalformedTaggedValue(f"{tag} needs a list")
        return [self._decode(item, depth + 1) for item in payload]

    def _pairs(self, tag: str, payload: Any, depth: int) -> list[tuple[Any, Any]]:
        if not isinstance(payload, list) or not all(isinstance(p, list) and len(p) == 2 for p in payload):
            raise MalformedTaggedValue("a mapping tag needs a list of [key, value] pairs")
        pairs = [(self._decode(k, depth + 1), self._decode(v, depth + 1)) for k, v in payload]
        self._check_hashes(tag, [key for key, _value in pairs])
        return pairs

    def _check_hashes(self, tag: str, keys: list[Any]) -> None:
        """Refuse keys whose hashes repeat too often: building the set/dict would compare them pairwise."""
        try:
            hashes = list(map(hash, keys))
        except TypeError as exc:
            raise MalformedTaggedValue(f"{tag}: unhashable key ({exc})") from exc
        # Hash values are ints below 2**61 in magnitude, which hash to themselves: this set is linear to build.
        repeated = len(hashes) - len(set(hashes))
        if repeated > self.budget.max_repeated_hashes:
            raise BudgetExceeded(f"{tag} of {len(keys):,} keys with {repeated:,} repeated hashes (limit "
                                 f"{self.budget.max_repeated_hashes:,}): decoding would be quadratic")
        if repeated:
            self.remaining_collision_work -= collision_work(keys, hashes)
            if self.remaining_collision_work < 0:
                raise BudgetExceeded(f"{tag}: keys that share a hash would take more than the job's "
                                     f"{self.budget.max_collision_work:,} element comparisons to build")

    def _decode_tag(self, tag: str, payload: Any, depth: int) -> Any:
        if tag == "$tuple":
            return tuple(self._items(tag, payload, depth))
        if tag in ("$set", "$frozenset"):
            items = self._items(tag, payload, depth)
            self._check_hashes(tag, items)
            return set(items) if tag == "$set" else frozenset(items)
        if tag == "$int":
            return self._decode_int(payload)
        if tag == "$f64" and isinstance(payload, list) and payload and isinstance(payload[0], str):
            # a float object and a pointer per 8 packed bytes, beside the text: ~4.75 bytes per character at the
            # peak, past the per-byte estimate `charge` made before parsing
            self._reserve(len(payload[0]) * BYTES_PER_PACKED_CHAR_EXTRA, "packed floats")
        if tag == "$decimal" and isinstance(payload, str) \
                and len(payload) / DIGITS_PER_INT_BIT > self.budget.max_int_bits:
            raise BudgetExceeded(f"Decimal of {len(payload):,} characters, over the {self.budget.max_int_bits:,}-bit "
                                 "limit for ints")
        if tag in SCALAR_TAGS:
            return decode_scalar_tag(tag, payload)
        if tag == "$dict":
            return dict(self._pairs(tag, payload, depth))
        if tag == "$ordereddict":
            return collections.OrderedDict(self._pairs(tag, payload, depth))
        if tag == "$counter":
            return collections.Counter(dict(self._pairs(tag, payload, depth)))
        if tag == "$defaultdict":
            factory, pairs = defaultdict_parts(payload)
            return collections.defaultdict(factory, self._pairs(tag, pairs, depth))
        if tag == "$fraction":
            return self._decode_fraction(payload, depth)
        raise MalformedTaggedValue(f"unknown tag {tag!r:.40}")

    def _decode_fraction(self, payload: Any, depth: int) -> fractions.Fraction:
        """A Fraction as the codec sends it (`Fraction.__eq__` is what upstream's `==` calls on it)."""
        if not isinstance(payload, list) or len(payload) != 2:
            raise MalformedTaggedValue("$fraction needs [numerator, denominator]")
        numerator, denominator = (self._decode(part, depth + 1) for part in payload)
        if type(numerator) is not int or type(denominator) is not int or denominator <= 0:
            raise MalformedTaggedValue("$fraction needs two ints, the denominator positive")
        return fractions.Fraction(numerator, denominator)

    def _decode_int(self, payload: Any) -> int:
        if not isinstance(payload, str):
            raise MalformedTaggedValue("$int needs a hex string")
        digits = len(payload.lstrip("-")) - 2  # "0x..." / "-0x..."
        if digits * 4 > self.budget.max_int_bits:
            raise BudgetExceeded(f"int of about {digits * 4:,} bits, over the {self.budget.max_int_bits:,}-bit limit")
        return int(payload, 16)  # base 16 is linear and not subject to sys.get_int_max_str_digits()


def int_is_printable(value: int) -> bool:
    """Can `str(value)` / `repr(value)` / `json.dumps(value)` print this int under the interpreter's digit limit?"""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    return limit == 0 or abs(value).bit_length() * DIGITS_PER_INT_BIT < limit - 1


def printable_int(value: int) -> int | str:
    """The int itself when it prints, else a short text naming its size and hex head (never raises)."""
    if int_is_printable(value):
        return value
    text = hex(value)
    return f"<int of {abs(value).bit_length():,} bits: {text[:40]}...>"


def safe_repr(value: Any, cap: int = 200) -> str:
    """`repr(value)[:cap]`, but never raising: ints past the str() digit limit and odd values get a stand-in."""
    try:
        return repr(value)[:cap]
    except (ValueError, RecursionError, MemoryError):
        pass
    try:
        return json.dumps(sandbox_codec.encode(value))[:cap]
    except Exception:  # noqa: BLE001 - a description must never crash the caller
        return f"<{type(value).__name__} that cannot be shown>"


def bounded_repr(value: Any, cap: int = 200) -> str:
    """The start of `repr(value)`, about `cap` characters, built without the whole repr.

    The start of `repr(value)`, about `cap` characters, built without the whole repr: a value of any size costs about
    `cap` steps. Lists, tuples, sets, dicts and strings are written as `repr` writes them (a set's or a dict's items in
    iteration order); anything else by its own `repr` when short, else by its type's name.
    """
    parts: list[str] = []
    room = [cap]

    def put(text: str) -> bool:
        parts.append(text)
        room[0] -= len(text)
        return room[0] > 0

    def walk(item: Any) -> bool:
        cls = type(item)
        if cls in (list, tuple, set, frozenset):
            if not item:
                return put({list: "[]", tuple: "()", set: "set()", frozenset: "frozenset()"}[cls])
            opening, closing = {list: ("[", "]"), tuple: ("(", ",)" if len(item) == 1 else ")"),
                                set: ("{", "}"), frozenset: ("frozenset({", "})")}[cls]
            if not put(opening):
                return False
            for position, element in enumerate(item):
                if (position and not put(", ")) or not walk(element):
                    return False
            return put(closing)
        if cls is dict:
            if not put("{"):
                return False
            for position, (key, element) in enumerate(item.items()):
                if (position and not put(", ")) or not walk(key) or not put(": ") or not walk(element):
                    return False
            return put("}")
        if cls in (str, bytes, bytearray) and len(item) > cap:
            return put(repr(item[:cap]))
        if cls is int and item.bit_length() > 4 * cap:
            return put(printable_int(item) if not int_is_printable(item) else hex(item)[:cap])
        if cls in (int, float, complex, bool, str, bytes, bytearray, type(None)):
            return put(repr(item))
        try:
            text = repr(item) if sys.getsizeof(item) < 64 * cap else f"<{cls.__name__}>"
        except Exception:  # noqa: BLE001 - a preview never raises
            text = f"<{cls.__name__}>"
        return put(text)

    try:
        walk(value)
    except RecursionError:
        parts.append("...")
    return "".join(parts)[:cap]


def bounded_set(items: Any, max_repeated_hashes: int = DecodeBudget().max_repeated_hashes,
                max_work: int = DecodeBudget().max_collision_work) -> set[Any]:
    """`set(items)` for values from a child, refusing (BudgetExceeded) items whose hashes repeat too often, or
    whose colliding items would take too many comparisons."""
    items = list(items)
    hashes = list(map(hash, items))
    repeated = len(hashes) - len(set(hashes))
    if repeated > max_repeated_hashes:
        raise BudgetExceeded(f"{len(items):,} items with {repeated:,} repeated hashes: building a set would be "
                             "quadratic")
    if repeated and collision_work(items, hashes) > max_work:
        raise BudgetExceeded(f"items that share a hash would take more than {max_work:,} element comparisons")
    return set(items)


def collision_work(keys: list[Any], hashes: list[int]) -> int:
    """About how many element comparisons building a set of `keys` takes: each pair of keys that share a hash is
    compared, a tuple or frozenset key element by element (so by its size, counted down to its scalars)."""
    groups: dict[int, list[Any]] = {}
    for key, key_hash in zip(keys, hashes):
        groups.setdefault(key_hash, []).append(key)
    work = 0
    for group in groups.values():
        if len(group) > 1:
            work += len(group) * (len(group) - 1) // 2 * max(map(_key_size, group))
    return work


def _key_size(key: Any) -> int:
    """About how many element comparisons comparing `key` with an equal-hash key takes: a small scalar 1; an int,
    str or bytes by its length (two equal-hash ints of 240,000 bits that differ only at the end took as long to
    compare as ~310 small ones: 1,025 of them took 4.6 s to put in a set); a tuple, 1 + its elements'; a frozenset,
    its elements' times its length (two frozensets whose elements share a hash compare each element with each).
    Tuples and frozensets are the only hashable containers a child can send."""
    cls = type(key)
    if cls is int:
        return 1 + abs(key).bit_length() // BITS_PER_COMPARISON
    if cls in (str, bytes):
        return 1 + len(key) // CHARS_PER_COMPARISON
    if cls is tuple:
        return 1 + sum(map(_key_size, key))
    if cls is frozenset:
        return 1 + len(key) * sum(map(_key_size, key))
    return 1
