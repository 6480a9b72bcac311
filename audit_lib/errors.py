"""One root exception with specific, picklable subclasses that carry structured fields."""

from __future__ import annotations


class AuditError(Exception):
    """Root of every error benchaudit raises on purpose."""

    reason_code: str = "audit_error"

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields = dict(fields)

    def __reduce__(self):  # keep subclasses picklable across process boundaries
        return (_rebuild_error, (type(self), self.message, self.fields))

    def __str__(self) -> str:
        return self.message


def _rebuild_error(cls: type[AuditError], message: str, fields: dict[str, object]) -> AuditError:
    return cls(message, **fields)


class DataError(AuditError):
    """A data file is missing, unreadable, or not what its registry entry promises."""

    reason_code = "data_error"


class DataUnavailableError(DataError):
    """A registered file could not be found in the cache, a mirror, or upstream."""

    reason_code = "data_unavailable"


class ChecksumMismatchError(DataError):
    """A file's sha256 differs from its pin (or from the hash recorded in the lock file)."""

    reason_code = "checksum_mismatch"


class CorruptFileError(DataError):
    """A file is truncated or does not parse as its format (gzip, JSON lines, CSV, parquet)."""

    reason_code = "corrupt_file"


class SchemaError(DataError):
    """A row lacks a required field or a field has the wrong type."""

    reason_code = "schema_error"


class UnknownSourceError(AuditError):
    """A dataset/file pair that the registry does not know."""

    reason_code = "unknown_source"


class ParameterError(AuditError):
    """A notebook or command-line parameter is unknown or has the wrong type or value."""

    reason_code = "bad_parameter"


class UnknownAuditError(ParameterError):
    """An audit name that has no notebook."""

    reason_code = "unknown_audit"


class SandboxHarnessError(AuditError):
    """The sandbox itself failed (not the code under test)."""

    reason_code = "harness_error"


class UnknownTaskError(AuditError, LookupError):
    """A task id the audit does not have (among its selected tasks); `near_matches` lists the closest ones."""

    reason_code = "unknown_task"


class NoTaskViewError(AuditError):
    """`task()` on an audit whose plugin offers no per-task view, or whose tasks could not be loaded."""

    reason_code = "no_task_view"
