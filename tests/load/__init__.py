"""Tests of dagtools/load/."""
