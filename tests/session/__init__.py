"""Tests of dagtools/session/."""
