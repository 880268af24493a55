"""The OpenAI Responses API on the `openai` SDK: `function_call` / `function_call_output` items.

Each request carries the whole conversation as input items (`store` is off: nothing is kept on the
provider's side), the system prompt as `instructions`, and the tools in the Responses shape, which
is the Chat Completions function lifted one level up (`{"type": "function", "name": ...}`).

With `reveals` (a deferred run), the tool list is the deferred rendering: selectTools is the
client-run `tool_search` tool and the catalogue's functions are marked `defer_loading`. The model's
`tool_search_call` is read as a selectTools call; in later requests it goes back as that item,
followed by the `tool_search_output` (and any note) found in `reveals` for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._errors import ModelError
from .._tools import ToolCall
from ..session._context import Message
from ..session._metatools import SELECT_TOOLS
from ._base import ModelResponse, Reveals, Usage, arguments_object, arguments_text
from ._openai import OpenAIModel

__all__ = ["OpenAIResponsesModel", "parse_responses_output", "to_responses_input", "to_responses_tools"]


class OpenAIResponsesModel(OpenAIModel):
    """`client.responses.create(...)`: the same options as `OpenAIModel`, another wire format."""

    provider = "OpenAI Responses API"
    deferred_format = "openai-responses"

    async def request(self, messages: Sequence[Message], tools: list[dict[str, Any]], reveals: Reveals | None = None) -> ModelResponse:
        instructions, items = to_responses_input(messages, reveals)
        options: dict[str, Any] = {"store": False}
        if instructions:
            options["instructions"] = instructions
        if tools:
            options["tools"] = to_responses_tools(tools)
            options["tool_choice"] = "auto"
            if self.parallel_tool_calls is not None:
                options["parallel_tool_calls"] = self.parallel_tool_calls
        options.update(self.sampling("max_output_tokens"))
        response = await self.openai_client().responses.create(model=self.name, input=items, extra_body=self.extra or None, **options)
        return parse_responses_output(response.to_dict())


def to_responses_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions tools (as the catalogue renders them) in the Responses shape. `strict` is
    always written: the Responses API takes a missing one as true, which plain schemas fail. A tool
    already in the Responses shape (a deferred list) is sent as it is."""
    out = []
    for tool in tools:
        if "function" not in tool and ("name" not in tool or "strict" in tool):
            out.append(tool)
            continue
        function = tool.get("function", tool)
        out.append({"type": "function", **{k: v for k, v in function.items() if k != "strict"}, "strict": bool(function.get("strict"))})
    return out


def to_responses_input(messages: Sequence[Message], reveals: Reveals | None = None) -> tuple[str, list[dict[str, Any]]]:
    """Instructions, and the conversation as input items; calls in `reveals` are tool searches."""
    reveals = reveals or {}
    system: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.content)
        elif message.role == "tool" and message.tool_call_id and message.tool_call_id in reveals:
            items += reveals[message.tool_call_id]
        elif message.role == "tool":
            items.append({"type": "function_call_output", "call_id": message.tool_call_id or "", "output": message.content})
        elif message.role == "assistant":
            if message.content:
                items.append({"role": "assistant", "content": message.content})
            items += [
                {"type": "tool_search_call", "call_id": call.id, "arguments": arguments_object(call.arguments), "execution": "client"}
                if call.id in reveals
                else {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments_text(call.arguments)}
                for call in message.tool_calls
            ]
        else:
            items.append({"role": "user", "content": message.content})
    return "\n\n".join(s for s in system if s), items


def parse_responses_output(data: dict[str, Any]) -> ModelResponse:
    if data.get("status") == "failed" or data.get("error"):
        error = data.get("error") or {}
        raise ModelError(f"The Responses API reported a failed response: {error.get('message') or error}")
    output = data.get("output")
    if not isinstance(output, list):
        raise ModelError(f"The Responses API's answer has no output list; it sent keys {sorted(data)}.")
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    for item in output:
        if not isinstance(item, dict):
            raise ModelError(f"The Responses API sent a malformed output item: {item!r}")
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
                elif part.get("type") == "refusal":
                    refusals.append(str(part.get("refusal", "")))
        elif item.get("type") == "function_call":
            if not item.get("name") or not item.get("call_id"):
                raise ModelError(f"The Responses API sent a function_call without a name or call_id: {item!r}")
            calls.append(ToolCall(name=str(item["name"]), arguments=item.get("arguments") or {}, id=str(item["call_id"])))
        elif item.get("type") == "tool_search_call" and item.get("execution") == "client":
            # The client-run tool search of a deferred list is selectTools (see dagtools.catalogue._deferred_formats).
            if not item.get("call_id"):
                raise ModelError(f"The Responses API sent a tool_search_call without a call_id: {item!r}")
            arguments = item.get("arguments")
            arguments = arguments if isinstance(arguments, (dict, str)) else {}
            calls.append(ToolCall(name=SELECT_TOOLS, arguments=arguments, id=str(item["call_id"])))
    if refusals and not calls:
        raise ModelError("The model refused: " + " ".join(refusals))
    stop = "tool_calls" if calls else "end"
    incomplete = data.get("incomplete_details") or {}
    if data.get("status") == "incomplete":
        stop = "max_tokens" if incomplete.get("reason") == "max_output_tokens" else str(incomplete.get("reason") or "incomplete")
    usage = data.get("usage") or {}
    return ModelResponse(
        text="\n".join(t for t in texts if t),
        tool_calls=tuple(calls),
        stop_reason=stop,
        usage=Usage(input_tokens=int(usage.get("input_tokens") or 0), output_tokens=int(usage.get("output_tokens") or 0)),
    )
