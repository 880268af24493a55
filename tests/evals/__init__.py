"""Tests of dagtools/evals/."""
