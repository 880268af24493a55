"""Tests of dagtools/agent/."""
