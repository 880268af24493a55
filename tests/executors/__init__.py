"""Tests of dagtools/executors/."""
