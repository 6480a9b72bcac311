"""`python -m audit_lib.runner.worker`: execute one audit job read as JSON on stdin (started by the runner)."""

import sys

# jsonschema (under nbformat) imports the optional rfc3987_syntax, which compiles a grammar at import: 2-4 s of
# CPU per worker. Notebook validation never checks IRIs, so the worker goes without it.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from audit_lib.runner.child import worker_main  # noqa: E402

if __name__ == "__main__":
    worker_main()
