"""The sandbox's public face: every piece of untrusted code runs through these names, and only these.

Private modules: `api` (run_asserts, call_function), `results` (statuses, SnippetResult), `testrun` (run_tests: the
program answers calls in its job, the test runs in a jailed judge), `limits` (a job's limits), `call_options`
(call_function's checked options and its judge, `CallJudge`), `codec` (tagged JSON; its errors in `value_errors`,
a defaultdict's factory in `factories`), `nesting` (room on the stack for deep values), `budget` (bounded decoding
in the parent), `pool` (warmed zygotes), `executors` (run_many), `cli` (the `sandbox` subcommand) and `zygote/` (the
processes that run the code).
"""

from audit_lib.sandbox.api import (
    ENVIRONMENT_STATUSES,
    STATUSES,
    AssertJob,
    AssertJobResult,
    NO_EXPECTED,
    CallJob,
    CallJobResult,
    CallJudge,
    CallOutcome,
    Limits,
    SnippetResult,
    Status,
    call_function,
    run_asserts,
    shutdown,
)
from audit_lib.sandbox.budget import (
    BudgetExceeded,
    DecodeBudget,
    EncodedValue,
    bounded_repr,
    bounded_set,
    decoded,
    decoded_or_refusal,
    printable_int,
    safe_repr,
)
from audit_lib.sandbox.codec import (
    DIGEST_TAG,
    MalformedTaggedValue,
    Unserializable,
    ValueDigest,
    canonical_encoding,
    contains_float,
    decode,
    digest_from_json,
    digest_of,
    encode,
    large_value_digest,
)
from audit_lib.sandbox.nesting import MAX_DEPTH, depth_room
from audit_lib.sandbox.executors import EXECUTOR_ENV, default_workers, open_executor, resolve_executor_name, run_many
from audit_lib.sandbox.testrun import TestsJob, TestsResult, names_read, run_tests, script_exit_codes, trust_counts

__all__ = [
    "DIGEST_TAG", "ENVIRONMENT_STATUSES", "EXECUTOR_ENV", "NO_EXPECTED", "STATUSES", "AssertJob", "AssertJobResult",
    "CallJob", "CallJobResult", "CallJudge", "bounded_repr", "CallOutcome", "Limits", "MalformedTaggedValue", "SnippetResult", "Status", "Unserializable",
    "ValueDigest", "call_function", "canonical_encoding", "contains_float", "decode", "default_workers",
    "digest_from_json", "digest_of", "encode", "large_value_digest", "open_executor", "resolve_executor_name",
    "register_cli", "run_asserts", "run_many", "shutdown", "BudgetExceeded", "DecodeBudget", "EncodedValue", "bounded_set", "decoded", "decoded_or_refusal",
    "printable_int", "safe_repr", "TestsJob", "TestsResult", "names_read", "script_exit_codes", "trust_counts",
    "run_tests", "MAX_DEPTH", "depth_room",
]


def register_cli(subparsers) -> None:  # noqa: ANN001 - argparse's private subparsers type
    """Add the `sandbox` subcommand to the top-level `python -m audit_lib` parser."""
    from audit_lib.sandbox import cli  # noqa: PLC0415 - argparse only when the CLI is built

    cli.register(subparsers)
