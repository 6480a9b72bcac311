"""The unbiased pass@k estimator (Chen et al. 2021), computed without large binomials, and the naive shortcut."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def pass_at_k(n: int, c: int, k: int) -> float:
    """`1 - C(n-c, k) / C(n, k)`: the chance that at least one of k samples drawn from n (c correct) passes.

    Computed as `1 - prod_{i=n-c+1..n} (1 - k/i)`, a product of factors in [0, 1] that never overflows.
    """
    _validate(n, c, k)
    if n - c < k:
        return 1.0
    failure_probability = 1.0
    for drawn_from in range(n - c + 1, n + 1):
        failure_probability *= 1.0 - k / drawn_from
    return 1.0 - failure_probability


def pass_at_k_exact(n: int, c: int, k: int) -> float:
    """The same quantity with exact integer binomials (slow for large n; the reference for tests)."""
    _validate(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def naive_pass_at_k(n: int, c: int, k: int) -> float:
    """The shortcut `1 - (1 - c/n)^k`: sampling k with replacement, biased for k > 1."""
    _validate(n, c, k)
    return 1.0 - (1.0 - c / n) ** k


def mean_pass_at_k(samples_per_task: Sequence[int], correct_per_task: Sequence[int], k: int) -> float:
    """The benchmark figure: pass@k averaged over tasks (EvalPlus reports it only when every n >= k)."""
    if len(samples_per_task) != len(correct_per_task):
        raise ValueError(f"{len(samples_per_task)} sample counts but {len(correct_per_task)} correct counts")
    if not samples_per_task:
        raise ValueError("pass@k of zero tasks is undefined")
    values = [pass_at_k(n, c, k) for n, c in zip(samples_per_task, correct_per_task)]
    return sum(values) / len(values)


@dataclass(frozen=True)
class ShortcutError:
    """How far the naive shortcut is from the unbiased estimator at one (n, c, k)."""

    n: int
    c: int
    k: int
    unbiased: float
    naive: float

    @property
    def error(self) -> float:
        return self.naive - self.unbiased


def shortcut_error_table(ns: Sequence[int], ks: Sequence[int], *, c_steps: int = 4) -> list[ShortcutError]:
    """Unbiased vs naive for each n, k <= n, and c at `c_steps` evenly spaced fractions of n (0 < c < n)."""
    rows: list[ShortcutError] = []
    for n in ns:
        cs = sorted({max(1, min(n - 1, round(n * step / (c_steps + 1)))) for step in range(1, c_steps + 1)})
        for k in ks:
            if k > n:
                continue
            for c in cs:
                rows.append(ShortcutError(n, c, k, pass_at_k(n, c, k), naive_pass_at_k(n, c, k)))
    return rows


def _validate(n: int, c: int, k: int) -> None:
    if n < 1 or not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs n >= 1, 0 <= c <= n and 1 <= k <= n; got n={n}, c={c}, k={k}")


__all__ = ["ShortcutError", "mean_pass_at_k", "naive_pass_at_k", "pass_at_k", "pass_at_k_exact",
           "shortcut_error_table"]
