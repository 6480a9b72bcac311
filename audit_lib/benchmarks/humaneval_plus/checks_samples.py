"""Your own samples, scored as the official harness scores them (`your_samples`); the logic is in `samples/`."""

from __future__ import annotations

from collections.abc import Mapping

from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.findings import Check, Result


def your_samples(inputs: Inputs, params: Params, *, needed: Mapping[str, Check]) -> Result:
    """`-p samples_path` scored with `-p harness` on `-p version`.

    per-sample verdicts, pass@k with and without the tasks the checks named by `flawed_from` find flawed, and agreement
    with `-p official_results_path`.
    """
    from audit_lib.benchmarks.humaneval_plus.samples.check import check_your_samples

    return check_your_samples(inputs, params, needed=needed)
