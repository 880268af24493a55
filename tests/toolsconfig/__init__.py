"""Tests of dagtools/toolsconfig/."""
