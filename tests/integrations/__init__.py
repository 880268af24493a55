"""Tests of dagtools/integrations/."""
