"""One module (or a few small ones) per audited benchmark: loading, replay of its rules, its checks."""
