"""Drafting a whitepaper's data file from its extracted text: draft.py (the parser), formats.yaml and
vendors/*.yaml (what the vendors' tables look like, as data)."""
