"""callChain, the meta-tool that runs several field tools in one call and one request, each step on
what the step before returns (see calls/_chain_calls.py). Its description carries a chain of the
served API, so the model sees the shape on names it knows."""

from __future__ import annotations

import json
from typing import Any

from .._errors import ToolCallError
from .._tools import Tool
from ..calls._chain_calls import CALL_CHAIN, MAX_STEPS, prepare_chain, run_chain
from ..calls._field import FieldCalls
from ..catalogue._catalogue import Catalogue
from ..catalogue._chain_example import example_chain
from ._toolsets import FunctionToolset

__all__ = ["CALL_CHAIN", "add_call_chain", "call_chain_tool"]


def call_chain_tool(catalogue: Catalogue) -> Tool:
    """callChain: several field tools in one call and one request, each on what the step before
    returns (see calls/_chain_calls.py), with an example chain of this API."""
    example = json.dumps({"steps": example_chain(catalogue)}, ensure_ascii=False)
    return Tool(
        name=CALL_CHAIN,
        description=(
            f"Run tools in one call, each step on what the step before returned: {example}. Step 1 is a Query tool or "
            "names its object; later steps name none; a step over a list runs on each item."
        ),
        parameters={
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "maxItems": MAX_STEPS,
                    "items": {
                        "type": "object",
                        "properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
                        "required": ["tool"],
                    },
                }
            },
            "required": ["steps"],
            "additionalProperties": False,
        },
        kind="local",
    )


def add_call_chain(toolset: FunctionToolset, catalogue: Catalogue, calls: FieldCalls) -> None:
    """Serve callChain in every session, listed from the first list: each step checked, then the
    whole chain sent as one request. Its steps need no selecting, so a model that found its tools
    with a search runs them at once, where selecting them first costs a turn and their schemas."""

    async def run(arguments: dict[str, Any]) -> Any:
        extra = [k for k in arguments if k != "steps"]
        if extra:
            raise ToolCallError(f"{CALL_CHAIN} has no parameter {', '.join(extra)}; it takes steps.")
        return await run_chain(calls, prepare_chain(calls, arguments.get("steps")))

    def tool() -> Tool:
        built: Tool = catalogue.derived("callChain tool", lambda: call_chain_tool(catalogue))
        return built

    toolset.add(CALL_CHAIN, tool, run)
