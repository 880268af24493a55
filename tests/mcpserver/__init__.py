"""Tests of dagtools/mcpserver/."""
