"""Bounded arithmetic and constructors for the parent's replay (`sandbox_lifted_eval`).

The operands are values the child chose. A single C operation is not interrupted by the replay's deadline, so each
helper here checks its operands' sizes first and raises `Unsupported` (the snippet then runs in assert mode, under
the job's own limits) where the operation would take the parent too long or too much memory:

- `*`, `**`, `<<` by the size of the result; repetition of str/bytes/bytearray/list/tuple by its length;
- `//`, `%`, `math.gcd` and `round(int, -n)` by the schoolbook division's work (CPython 3.11 divides in
  quotient bits x divisor bits): 4M-bit // 2M-bit took 8.6 s; at the limit below it takes ~0.03 s, and HumanEval+'s
  largest honest ints (116,000 bits) divide one by a half-size one at a sixth of it;
- `sum()` and `math.prod()` by the running result's size summed over the items;
- `%`-formatting of str/bytes/bytearray (a 14-byte `b'%0999999999d'` allocates a gigabyte).

`set`, `frozenset` and `range` stay the real types in the replay's namespace (`isinstance`, `type(x) == set`);
`constructor_for` gives the bounded function a call of one of them goes through instead.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

from audit_lib.sandbox.budget import bounded_set

MAX_RESULT_BITS = 1 << 22
MAX_REPEAT_ITEMS = 10_000_000
# Quotient bits x divisor bits (see the docstring): ~0.03 s at the limit, 6x the largest honest division we know.
MAX_DIVISION_WORK = 20_000_000_000
# sum() and math.prod() of ints: each addition copies the running sum, each multiplication by a small int the running
# product, so the work is the running result's bits summed over the items (~2.5e-11 s per bit-step: summing a
# 4M-bit int and then 100,000 ones took 9.1 s). At this limit ~0.1 s; 34,000 of HumanEval+'s largest honest ints
# (116,000 bits) still sum, and so do a million small ints or floats.
MAX_ACCUMULATE_WORK = 4_000_000_000
# round(int, -n) first computes 10 ** n: 5 ms at this n.
MAX_ROUND_DIGITS = 100_000
_SEQUENCES = (str, bytes, bytearray, list, tuple)
_TEXTS = (str, bytes, bytearray)


class Unsupported(Exception):
    """The replay met something it does not model; the snippet runs in assert mode instead."""


def _bits(value: Any) -> int:
    return abs(value).bit_length() if type(value) is int else 64


def _both_ints(left: Any, right: Any) -> bool:
    return type(left) in (int, bool) and type(right) in (int, bool)


def checked_mul(left: Any, right: Any) -> Any:
    for count, other in ((left, right), (right, left)):
        if type(count) in (int, bool) and type(other) in _SEQUENCES:
            if max(count, 0) * len(other) > MAX_REPEAT_ITEMS:
                raise Unsupported("repetition too large for the parent")
    if type(left) is int and type(right) is int and _bits(left) + _bits(right) > MAX_RESULT_BITS:
        raise Unsupported("product too large for the parent")
    return left * right


def checked_pow(base: Any, exponent: Any) -> Any:
    if type(base) is int and type(exponent) is int and exponent > 0 \
            and max(_bits(base), 1) * exponent > MAX_RESULT_BITS:
        raise Unsupported("power too large for the parent")
    return base ** exponent


def checked_shift(value: Any, by: Any) -> Any:
    if type(by) is int and by > MAX_RESULT_BITS:
        raise Unsupported("shift too large for the parent")
    return value << by


def division_work(dividend: Any, divisor: Any) -> int:
    """About how many bit-steps `dividend // divisor` takes: quotient bits times divisor bits (0 unless both ints)."""
    if not _both_ints(dividend, divisor):
        return 0
    dividend_bits, divisor_bits = abs(dividend).bit_length(), abs(divisor).bit_length()
    return max(dividend_bits - divisor_bits, 0) * divisor_bits


def _check_division(dividend: Any, divisor: Any, what: str) -> None:
    work = division_work(dividend, divisor)
    if work > MAX_DIVISION_WORK:
        raise Unsupported(f"{what} of a {_bits(dividend):,}-bit int by a {_bits(divisor):,}-bit int is too slow "
                          f"for the parent ({work:,} bit-steps; limit {MAX_DIVISION_WORK:,})")


def checked_floordiv(left: Any, right: Any) -> Any:
    _check_division(left, right, "//")
    return left // right


def checked_mod(left: Any, right: Any) -> Any:
    if type(left) in _TEXTS:
        raise Unsupported("%-formatting")
    _check_division(left, right, "%")
    return left % right


def bounded_gcd(*integers: Any) -> Any:
    """math.gcd: Lehmer's algorithm is quadratic in the smaller operand after a first division."""
    if all(type(value) in (int, bool) for value in integers) and len(integers) > 1:
        sizes = sorted(abs(value).bit_length() for value in integers)
        if sizes[-2] ** 2 + max(sizes[-1] - sizes[-2], 0) * sizes[-2] > MAX_DIVISION_WORK:
            raise Unsupported("math.gcd of ints this large is too slow for the parent")
    return math.gcd(*integers)


def bounded_round(number: Any, *args: Any, **kwargs: Any) -> Any:
    """round(): for an int and a negative ndigits, Python computes 10 ** -ndigits and divides by it."""
    ndigits = args[0] if args else kwargs.get("ndigits")
    if type(number) in (int, bool) and type(ndigits) in (int, bool) and ndigits < 0:
        if -ndigits > MAX_ROUND_DIGITS:
            raise Unsupported(f"round() to {ndigits:,} digits is too slow for the parent")
        power_bits = int(-ndigits * math.log2(10)) + 1
        if max(_bits(number) - power_bits, 0) * power_bits > MAX_DIVISION_WORK:
            raise Unsupported("round() of an int this large is too slow for the parent")
    return round(number, *args, **kwargs)


def _int_bits(items: list[Any]) -> list[int]:
    """Each item's bits if an int (at C speed when all are), else 0."""
    if set(map(type, items)) <= {int, bool}:
        return list(map(int.bit_length, items))
    return [item.bit_length() if type(item) in (int, bool) else 0 for item in items]


def _check_accumulation(bits: list[int], start: Any, combine: Callable[[int, int], int], what: str) -> None:
    """`bits`: the items' int sizes; `combine` gives the running result's size from the last one and an item's."""
    work = sum(itertools.accumulate(bits, combine, initial=_int_bits([start])[0]))
    if work > MAX_ACCUMULATE_WORK:
        raise Unsupported(f"{what} of {len(bits):,} items up to {max(bits, default=0):,} bits is too slow for the "
                          f"parent ({work:,} bit-steps; limit {MAX_ACCUMULATE_WORK:,})")


def bounded_prod(values: Any, *, start: Any = 1) -> Any:
    items = list(values)
    if sum(_bits(item) for item in items) + _bits(start) > MAX_RESULT_BITS:
        raise Unsupported("product too large for the parent")
    _check_accumulation(_int_bits(items), start, operator.add, "math.prod()")
    return math.prod(items, start=start)


def numeric_sum(values: Any, start: Any = 0) -> Any:
    if type(start) not in (int, float, complex, bool):
        raise Unsupported("sum with a non-numeric start")
    items = values if type(values) in (list, tuple) else list(values)
    _check_accumulation(_int_bits(items), start, max, "sum()")
    return sum(items, start)


def type_of(value: Any) -> type:
    return type(value)


def _bounded_range(*args: Any) -> range:
    span = range(*args)
    try:
        length = len(span)
    except OverflowError:
        length = MAX_REPEAT_ITEMS + 1
    if length > MAX_REPEAT_ITEMS:
        raise Unsupported("range too large for the parent")
    return span


def _new_set(*args: Any) -> set[Any]:
    if len(args) > 1:
        return set(*args)  # TypeError, as Python, before reading anything
    return bounded_set(args[0]) if args else set()


def _new_frozenset(*args: Any) -> frozenset[Any]:
    if len(args) > 1:
        return frozenset(*args)  # TypeError, as Python
    return frozenset(bounded_set(args[0])) if args else frozenset()


_CONSTRUCTORS: dict[type, Callable[..., Any]] = {set: _new_set, frozenset: _new_frozenset, range: _bounded_range,
                                                 type: type_of}  # type(name, bases, ns) would make a class


def constructor_for(function: Any, has_keywords: bool) -> Any:
    """What a call of `function` runs: the bounded constructor for `set`, `frozenset`, `range` and `type` (the real
    type when given keywords, which it refuses with Python's own TypeError before any work), else `function`."""
    if has_keywords or type(function) is not type:
        return function
    return _CONSTRUCTORS.get(function, function)
