"""`dagtools shell`: an API as a command line, for a person at a terminal or an agent in one.

One line is one call in the contract's words (`Type_field [Type#N] name=value`), a `|` chains calls
in one request as `callChain` does, and a few built-ins help, search, list what is held, save and
trace. `_parse` reads a line, `_runner` runs it on a session (through the fixed MCP toolset, so the
answer is what an MCP client gets), `_complete` completes it, `_terminal` is the interactive prompt,
`_help` the help texts, `_places` where named sessions and the history live.
"""

from ._places import default_state_dir, default_store_url, history_path, session_key
from ._runner import Outcome, ShellRunner, mcp_json

__all__ = ["Outcome", "ShellRunner", "default_state_dir", "default_store_url", "history_path", "mcp_json", "session_key"]
