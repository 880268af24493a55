"""Tests of dagtools/trace/."""
