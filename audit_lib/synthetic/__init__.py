"""Seeded generators for data that is not public; everything they write is labelled synthetic."""
