"""Entry point for `python -m audit_lib`."""

from audit_lib.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
