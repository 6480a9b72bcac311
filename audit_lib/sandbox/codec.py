"""Tagged JSON for values crossing the sandbox boundary (stdlib only: the sandboxed child imports it too).

Plain JSON carries `None`, `bool`, `str`, `list`, small `int` and finite `float` as is. Everything else that counts
as plain data is an object with exactly one key starting with `$`:

    {"$tuple": [...]}  {"$set": [...]}  {"$frozenset": [...]}  {"$int": "<hex>"}  {"$float": "nan"|"inf"|"-inf"}
    {"$bytes": "<base64>"}  {"$bytearray": "<base64>"}  {"$complex": [re, im]}  {"$dict": [[key, value], ...]}
    {"$ordereddict": [[k, v], ...]}  {"$counter": [[k, v], ...]}  {"$defaultdict": [factory, [[k, v], ...]]}
    {"$f64": ["<base64 of little-endian doubles>", [positions of the ints]]}  {"$fraction": [num, den]}
    {"$decimal": "<str of the Decimal>"}

A defaultdict's `factory` is null, the name of a builtin type (`DEFAULT_FACTORIES`), or `["program", "<what it
is>"]` for any other: decoded as an `UncarriedFactory`, which raises when a missing key asks it for a default.

`$f64` carries a long list of floats (ints among them, each exact as a double) as packed doubles: JSON spells a
float at ~0.2 us, and HumanEval+'s HumanEval/130 sends 10M of them (measured: 2.3 s to encode and 0.71 s to parse
as JSON, 0.84 s and 0.42 s packed).

A dict whose keys are all `str` not starting with `$` is a plain JSON object; any other dict is `$dict`. Types are
matched exactly (`type(v) is int`); a numpy scalar travels as its Python number and an instance of a subclass of a
builtin type as its base type's value (`_builtin_value`), so rigged comparisons never cross. Anything else raises
`Unserializable` naming its type, and the caller reports it as its own outcome.
"""

from __future__ import annotations

import base64
import collections
import decimal
import fractions
import json
import math
import operator
import sys
from array import array
from itertools import compress, count, repeat
from typing import Any

from audit_lib.sandbox.canonical import canonical_text
from audit_lib.sandbox.factories import (  # noqa: F401 - part of the codec's face
    DEFAULT_FACTORIES,
    UncarriedFactory,
    decode_factory,
    defaultdict_parts,
    encode_factory,
)
from audit_lib.sandbox.nesting import MAX_DEPTH, depth_room
from audit_lib.sandbox.value_errors import MalformedTaggedValue, Unserializable
from audit_lib.sandbox.value_errors import type_name as _type_name
# Bound here, not looked up in builtins at each use: the code under test may rebind builtins in the job.
from builtins import (  # noqa: A004
    AttributeError, Exception, ImportError, NotImplemented, ValueError, all, any, bool, bytearray, bytes,
    complex, dict, float, frozenset, getattr, hash, hex, int, isinstance, issubclass, len, list, map, max, min,
    object, set, slice, str, tuple, type,
)

# Every job's template imports this module: the C sha256 that hashlib itself falls back to loads no OpenSSL there
# (same digests), and `ValueDigest` is written out rather than a dataclass (dataclasses brings inspect, ast...).
# Each page the template holds is copied into every job's page tables at its fork.
try:
    from _sha256 import sha256 as _sha256
except ImportError:  # Python 3.12+
    try:
        from _sha2 import sha256 as _sha256
    except ImportError:
        from hashlib import sha256 as _sha256

# Ints beyond this are sent as hex: JSON readers elsewhere lose precision past 2**53, and Python refuses to print
# ints with more than 4300 decimal digits.
PLAIN_INT_BOUND = 2**53


# A value sent as its digest: {"$digest": [sha256 of its canonical encoding, encoded size, type name]}.
DIGEST_TAG = "$digest"


def _encode_float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


_JSON_SAFE_LEAVES = frozenset({str, bool, type(None)})
JSON_LEAVES = frozenset({str, bool, type(None), int, float})


_NUMBERS = frozenset({int, float, bool})
_PACKABLE = frozenset({int, float})
# Lists shorter than this stay plain JSON: packing pays off for long ones, and short ones stay readable.
PACK_FLOATS_FROM = 256


def _packed_floats(items: list, kinds: set[type]) -> dict[str, Any] | None:
    """`{"$f64": ...}` for a long list of floats (and ints within 2**53, which doubles hold exactly), else None."""
    if len(items) < PACK_FLOATS_FROM or float not in kinds or not kinds <= _PACKABLE:
        return None
    ints = list(compress(count(), map(operator.is_, map(type, items), repeat(int)))) if int in kinds else []
    if ints:
        values = [items[i] for i in ints]
        if not (-PLAIN_INT_BOUND < min(values) and max(values) < PLAIN_INT_BOUND):
            return None
    doubles = array("d", items)
    if sys.byteorder != "little":
        doubles.byteswap()
    return {"$f64": [base64.b64encode(doubles.tobytes()).decode("ascii"), ints]}


def _unpacked_floats(payload: Any) -> list[float | int]:
    """The list `_packed_floats` packed; refuses positions that are not increasing ints naming exact integers."""
    if not isinstance(payload, list) or len(payload) != 2 or not isinstance(payload[0], str) \
            or not isinstance(payload[1], list):
        raise MalformedTaggedValue("$f64 needs [base64 text, [int positions]]")
    text, ints = payload
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except ValueError as exc:  # binascii.Error and UnicodeEncodeError are ValueErrors
        raise MalformedTaggedValue(f"$f64 needs base64 text ({exc})") from None
    if len(raw) % 8:
        raise MalformedTaggedValue("$f64 needs a whole number of doubles")
    doubles = array("d")
    doubles.frombytes(raw)
    del raw  # the list below is the big allocation: the budget's estimate counts it and one packed copy
    if sys.byteorder != "little":
        doubles.byteswap()
    values = doubles.tolist()
    del doubles
    if ints:
        if set(map(type, ints)) != {int} or ints[0] < 0 or ints[-1] >= len(values) \
                or not all(map(operator.lt, ints, ints[1:])):
            raise MalformedTaggedValue("$f64 positions must be increasing ints within the list")
        for i in ints:
            number = values[i]
            if not (number.is_integer() and -PLAIN_INT_BOUND < number < PLAIN_INT_BOUND):
                raise MalformedTaggedValue(f"$f64 position {i} holds {number!r}, not an exact integer")
            values[i] = int(number)
    return values


def _flat_json_safe(items: list | tuple, kinds: set[type] | None = None) -> bool:
    """True when every element is a leaf JSON carries exactly as is (checked at C speed, no per-item calls)."""
    kinds = set(map(type, items)) if kinds is None else kinds
    if kinds <= _JSON_SAFE_LEAVES:
        return True
    if not kinds <= JSON_LEAVES:
        return False
    if kinds <= _NUMBERS:  # ints, floats and bools mixed: one C-level pass for the bounds, one for finiteness
        numbers = items
    else:  # numbers mixed with str / None
        numbers = [item for item in items if type(item) in _NUMBERS]
    if not numbers:
        return True
    # The bounds test comes first: math.isfinite overflows on ints beyond the float range.
    if not (-PLAIN_INT_BOUND < min(numbers) and max(numbers) < PLAIN_INT_BOUND):
        return False
    return float not in kinds or all(map(math.isfinite, numbers))


def _encode_pairs(items: Any, depth: int) -> list[list[Any]]:
    return [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in items]


def plain_leaf(value: Any) -> bool:
    """Is `value` its own tagged form: a str, bool, None, an int within 2**53 or a finite float (nothing nested)?"""
    cls = type(value)
    return cls is str or cls is bool or value is None or (cls is int and -PLAIN_INT_BOUND < value < PLAIN_INT_BOUND) \
        or (cls is float and math.isfinite(value))


def encode(value: Any) -> Any:
    """The JSON-able tagged form of `value`; raises `Unserializable` for anything that is not plain data.

    A value nested deeper than `MAX_DEPTH` is not plain data either; the encoding has `depth_room()` on the stack (a
    leaf, the common case, needs none)."""
    if plain_leaf(value):
        return value
    with depth_room():
        return _encode(value, 0)


def _encode(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unserializable(_type_name(value), f"nested deeper than {MAX_DEPTH}")
    cls = type(value)
    if value is None or cls is bool or cls is str:
        return value
    if cls is int:
        return value if -PLAIN_INT_BOUND < value < PLAIN_INT_BOUND else {"$int": hex(value)}
    if cls is float:
        return _encode_float(value)
    if cls is list:
        kinds = set(map(type, value))
        packed = _packed_floats(value, kinds)
        if packed is not None:
            return packed
        return value if _flat_json_safe(value, kinds) else [_encode(item, depth + 1) for item in value]
    if cls is tuple:
        return {"$tuple": list(value) if _flat_json_safe(value) else [_encode(item, depth + 1) for item in value]}
    if cls is dict:
        if all(type(k) is str and not k.startswith("$") for k in value):
            return {k: _encode(v, depth + 1) for k, v in value.items()}
        return {"$dict": _encode_pairs(value.items(), depth)}
    if cls is set or cls is frozenset:
        return {"$set" if cls is set else "$frozenset": [_encode(item, depth + 1) for item in value]}
    if cls is bytes or cls is bytearray:
        tag = "$bytes" if cls is bytes else "$bytearray"
        return {tag: base64.b64encode(bytes(value)).decode("ascii")}
    if cls is complex:
        return {"$complex": [_encode_float(value.real), _encode_float(value.imag)]}
    if cls is collections.OrderedDict:
        return {"$ordereddict": _encode_pairs(value.items(), depth)}
    if cls is collections.Counter:
        return {"$counter": _encode_pairs(value.items(), depth)}
    if cls is collections.defaultdict:
        return {"$defaultdict": [encode_factory(value.default_factory), _encode_pairs(value.items(), depth)]}
    if cls is fractions.Fraction:
        return {"$fraction": [_encode(value.numerator, depth + 1), _encode(value.denominator, depth + 1)]}
    if cls is decimal.Decimal:
        return {"$decimal": str(value)}  # exact: a Decimal's str() gives back the same sign, digits and exponent
    plain = _builtin_value(value, cls)
    if plain is not _NOT_PLAIN:
        return _encode(plain, depth)
    raise Unserializable(_type_name(value))


_NOT_PLAIN = object()
# The base types' own copy methods: what a subclass's instance holds, read past any method the subclass overrides
# (its `__eq__`, `__iter__`, `__int__` ...), as an exact builtin value.
_BASE_COPIES = ((int, int.__int__), (float, float.__float__), (str, str.__str__),
                (tuple, lambda v: tuple.__getitem__(v, slice(None))), (list, lambda v: list.__getitem__(v, slice(None))),
                (dict, dict.copy), (bytes, bytes.__bytes__))


def _builtin_value(value: Any, cls: type) -> Any:
    """The exact builtin value behind a numpy scalar or a subclass of a builtin type, else `_NOT_PLAIN`.

    A numpy scalar is sent as the Python number `numpy.generic.item` gives (what upstream's `==` compares it as);
    an instance of a subclass of int, float, str, tuple, list, dict or bytes as its base type's value: its own
    comparison methods are never consulted, so one that lies about equality gains nothing."""
    numpy = sys.modules.get("numpy")
    generic = getattr(numpy, "generic", None) if numpy is not None else None
    if isinstance(generic, type) and issubclass(cls, generic):
        item = generic.item(value)
        return item if type(item) in (bool, int, float, complex, str, bytes) else _NOT_PLAIN
    for base, copy in _BASE_COPIES:
        if issubclass(cls, base):  # the real type: `isinstance` would believe a rigged `__class__`
            return copy(value)
    return _NOT_PLAIN


def _decode_float(obj: Any) -> float:
    if type(obj) in (int, float):
        return float(obj)
    if isinstance(obj, dict) and set(obj) == {"$float"} and obj["$float"] in ("nan", "inf", "-inf"):
        return float(obj["$float"])
    raise MalformedTaggedValue(f"bad float {obj!r:.80}")


def _decode_pairs(payload: Any) -> list[tuple[Any, Any]]:
    if not isinstance(payload, list) or not all(isinstance(p, list) and len(p) == 2 for p in payload):
        raise MalformedTaggedValue("a mapping tag needs a list of [key, value] pairs")
    return [(_decode(k), _decode(v)) for k, v in payload]


SCALAR_TAGS = frozenset({"$float", "$bytes", "$bytearray", "$complex", "$f64", "$decimal"})


def decode_scalar_tag(tag: str, payload: Any) -> Any:
    """A tagged leaf (float, bytes, bytearray, complex, packed floats): no nesting, so the parent's bounded decoder
    shares it."""
    if tag == "$float":
        return _decode_float({tag: payload})
    if tag == "$f64":
        return _unpacked_floats(payload)
    if tag == "$decimal":
        return _decode_decimal(payload)
    if tag in ("$bytes", "$bytearray"):
        if not isinstance(payload, str):
            raise MalformedTaggedValue(f"{tag} needs base64 text")
        raw = base64.b64decode(payload.encode("ascii"), validate=True)
        return raw if tag == "$bytes" else bytearray(raw)
    if not isinstance(payload, list) or len(payload) != 2:
        raise MalformedTaggedValue("$complex needs [re, im]")
    return complex(_decode_float(payload[0]), _decode_float(payload[1]))


def _decode_decimal(payload: Any) -> decimal.Decimal:
    if not isinstance(payload, str):
        raise MalformedTaggedValue("$decimal needs a string")
    try:
        return decimal.Decimal(payload)  # exact whatever the context: the constructor does not round
    except (decimal.InvalidOperation, ValueError) as exc:
        raise MalformedTaggedValue(f"$decimal {payload!r:.80} is not a number ({type(exc).__name__})") from None


def _decode_tag(tag: str, payload: Any) -> Any:
    if tag in ("$tuple", "$set", "$frozenset"):
        if not isinstance(payload, list):
            raise MalformedTaggedValue(f"{tag} needs a list")
        items = [_decode(item) for item in payload]
        return tuple(items) if tag == "$tuple" else (set(items) if tag == "$set" else frozenset(items))
    if tag == "$int":
        if not isinstance(payload, str):
            raise MalformedTaggedValue("$int needs a hex string")
        return int(payload, 16)
    if tag in SCALAR_TAGS:
        return decode_scalar_tag(tag, payload)
    if tag == "$dict":
        return dict(_decode_pairs(payload))
    if tag == "$ordereddict":
        return collections.OrderedDict(_decode_pairs(payload))
    if tag == "$counter":
        return collections.Counter(dict(_decode_pairs(payload)))
    if tag == "$defaultdict":
        factory, pairs = defaultdict_parts(payload)
        return collections.defaultdict(factory, _decode_pairs(pairs))
    if tag == "$fraction":
        if not isinstance(payload, list) or len(payload) != 2:
            raise MalformedTaggedValue("$fraction needs [numerator, denominator]")
        numerator, denominator = _decode(payload[0]), _decode(payload[1])
        if type(numerator) is not int or type(denominator) is not int or denominator <= 0:
            raise MalformedTaggedValue("$fraction needs two ints, the denominator positive")
        return fractions.Fraction(numerator, denominator)
    raise MalformedTaggedValue(f"unknown tag {tag!r:.40}")


def decode(obj: Any) -> Any:
    """The Python value of a tagged JSON object (already parsed by `json.loads`)."""
    with depth_room():
        return _decode(obj)


def _decode(obj: Any) -> Any:
    cls = type(obj)
    if obj is None or cls in (bool, str, int, float):
        return obj
    if cls is list:
        return obj if set(map(type, obj)) <= JSON_LEAVES else [_decode(item) for item in obj]
    if cls is dict:
        if len(obj) == 1:
            (key,) = obj
            if key.startswith("$"):
                return _decode_tag(key, obj[key])
        if any(k.startswith("$") for k in obj):
            raise MalformedTaggedValue("a plain object may not have keys starting with '$'")
        return {k: _decode(v) for k, v in obj.items()}
    raise MalformedTaggedValue(f"not a JSON value: {cls.__name__}")


# ---------------------------------------------------------------------------------------------------- digests

class ValueDigest:
    """Stands in for a huge float-free value: sha256 of its canonical tagged JSON. Frozen; equal to a digest of the
    same three fields only.

    Equality with a digest is equality of canonical encodings (`canonical_text`: sets and mappings in one order),
    which matches `==` for float-free values except across types (`[1, 2] == [1.0, 2.0]`, `{1} == frozenset({1})`,
    a dict and a Counter with the same pairs).
    """

    __slots__ = ("sha256", "nbytes", "type_name")
    sha256: str
    nbytes: int
    type_name: str

    def __init__(self, sha256: str, nbytes: int, type_name: str) -> None:
        for name, value in (("sha256", sha256), ("nbytes", nbytes), ("type_name", type_name)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ValueDigest is frozen: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"ValueDigest is frozen: cannot delete {name}")

    def _fields(self) -> tuple[str, int, str]:
        return (self.sha256, self.nbytes, self.type_name)

    def __eq__(self, other: object) -> bool:
        return other._fields() == self._fields() if type(other) is ValueDigest else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[type, tuple[str, int, str]]:  # pickled by executors, copied by deepcopy
        return (ValueDigest, self._fields())

    def __repr__(self) -> str:
        return f"ValueDigest(sha256={self.sha256!r}, nbytes={self.nbytes!r}, type_name={self.type_name!r})"

    def to_json(self) -> dict[str, list[Any]]:
        return {DIGEST_TAG: [self.sha256, self.nbytes, self.type_name]}


def canonical_encoding(value: Any) -> bytes:
    """Tagged JSON with sorted keys, sets and mappings: equal bytes for equal float-free values of the same types."""
    return canonical_text(encode(value)).encode("utf-8")


def digest_of(value: Any) -> ValueDigest:
    encoded = canonical_encoding(value)
    return ValueDigest(_sha256(encoded).hexdigest(), len(encoded), type(value).__name__)


def large_value_digest(value: Any, tagged: Any, above_bytes: int) -> ValueDigest | None:
    """The digest that stands for `value` (already `encode`d as `tagged`) when it is float-free and its canonical
    encoding is larger than `above_bytes`; None when the value itself should be kept. Floats never become digests:
    EvalPlus compares them with tolerances, which needs the value."""
    if contains_float(value):
        return None
    canonical = canonical_text(tagged).encode("utf-8")
    if len(canonical) <= above_bytes:
        return None
    return ValueDigest(_sha256(canonical).hexdigest(), len(canonical), type(value).__name__)


def digest_from_json(payload: Any) -> ValueDigest | None:
    """The digest a `{"$digest": [...]}` object stands for; None for anything else (including malformed ones)."""
    if type(payload) is not dict or set(payload) != {DIGEST_TAG}:
        return None
    fields = payload[DIGEST_TAG]
    if type(fields) is not list or len(fields) != 3:
        return None
    sha256, nbytes, type_name = fields
    if type(sha256) is not str or len(sha256) != 64 or type(nbytes) is not int or type(type_name) is not str:
        return None
    return ValueDigest(sha256, nbytes, type_name[:200])


_CONTAINER_OR_FLOAT = (float, complex, decimal.Decimal, list, tuple, set, frozenset, dict)


def contains_float(value: Any) -> bool:
    """Is there a float, complex or Decimal anywhere in this value (where tolerances or `==`, not digests, decide)?

    A Decimal counts: `Decimal('1.0') == Decimal('1')` though their encodings differ."""
    with depth_room():
        return _contains_float(value)


def _contains_float(value: Any) -> bool:
    if isinstance(value, (float, complex, decimal.Decimal)):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        if not any(issubclass(kind, _CONTAINER_OR_FLOAT) for kind in set(map(type, value))):
            return False  # a flat collection of ints / str / None: decided without a call per item
        return any(_contains_float(item) for item in value)
    if isinstance(value, dict):
        return any(_contains_float(k) or _contains_float(v) for k, v in value.items())
    return False
