"""Call scripts: a file of tool calls replayed against an API, for tests, CI, demos and bug reports."""

from ._script import Script, load_script, run_script

__all__ = ["Script", "load_script", "run_script"]
