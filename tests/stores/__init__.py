"""Tests of dagtools/stores/."""
