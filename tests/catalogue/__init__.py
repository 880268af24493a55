"""Tests of dagtools/catalogue/."""
