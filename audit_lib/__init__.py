"""benchaudit: audit code-generation benchmarks by replaying how they are built and scored."""

__version__ = "0.1.0"
