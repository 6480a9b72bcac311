"""Entry point for `python -m audit_lib`."""

import sys

# jsonschema (under nbformat) imports the optional rfc3987_syntax, which compiles a grammar at import: 2-4 s
# before any command runs. Notebook validation never checks IRIs, so the command line goes without it.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from audit_lib.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
