"""Tests of dagtools/cli/."""
