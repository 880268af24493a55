"""The tools config of seed 002: a JSON function-calling format with `api`, `local` and `client` tools,
context fields hidden from the model, chat persistence, and an export of the catalogue.

`format` reads and checks a config; `apis` runs its entries against GraphQL and REST APIs; `attach`
adds them to a session; `chat` saves and loads the conversation; `export` writes the catalogue out.
"""

from ._apis import RestApi
from ._attach import AttachedTools, attach_tools_config
from ._chat import ChatStore
from ._export import export_tools_config
from ._format import ToolEntry, ToolsConfig, load_tools_config

__all__ = [
    "AttachedTools",
    "ChatStore",
    "RestApi",
    "ToolEntry",
    "ToolsConfig",
    "attach_tools_config",
    "export_tools_config",
    "load_tools_config",
]
