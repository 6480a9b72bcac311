"""The sandbox zygote package: code for the zygote, its job children and the judge (stdlib only, never the pool)."""
