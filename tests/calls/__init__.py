"""Tests of dagtools/calls/."""
