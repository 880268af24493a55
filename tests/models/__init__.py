"""Tests of dagtools/models/."""
