"""The README's "Agent frameworks" section runs: each framework's block, after the shared kitchen
block, bakes the fries with that framework's test model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.frameworks import CALLS, check_offered

ROOT = Path(__file__).resolve().parents[1]


def section_blocks() -> tuple[str, dict[str, str]]:
    """The shared block, and each subsection's block by its heading."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Agent frameworks\n", 1)[1].split("\n## ", 1)[0]
    shared, *subsections = section.split("\n### ")
    block = re.compile(r"```python\n(.*?)```", re.S)
    blocks = {}
    for subsection in subsections:
        heading = subsection.splitlines()[0]
        [code] = block.findall(subsection)
        blocks[heading] = code
    [shared_code] = block.findall(shared)
    return shared_code, blocks


def bake_fries(heading: str, monkeypatch: pytest.MonkeyPatch):
    shared, blocks = section_blocks()
    monkeypatch.chdir(ROOT)  # the examples name the kitchen by its path in the repository
    namespace: dict = {}
    exec(compile(shared + "\n" + blocks[heading], f"README.md ({heading})", "exec"), namespace)
    return namespace["bake_fries"]


def test_the_section_has_one_block_per_framework():
    assert list(section_blocks()[1]) == ["pydantic-ai", "OpenAI Agents SDK", "LangChain and LangGraph", "Mellea"]


async def test_pydantic_ai(monkeypatch):
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")
    from tests.test_integration_pydantic_ai import scripted

    model, offered = scripted(CALLS)
    assert await bake_fries("pydantic-ai", monkeypatch)(model) == {"fries": "Plate#2"}
    check_offered(offered)


async def test_openai_agents(monkeypatch):
    pytest.importorskip("agents", reason="openai-agents is not installed")
    from agents import set_tracing_disabled

    from tests.test_integration_openai_agents import scripted

    model = scripted(CALLS)
    set_tracing_disabled(True)  # nothing leaves this machine
    try:
        assert await bake_fries("OpenAI Agents SDK", monkeypatch)(model) == {"fries": "Plate#2"}
    finally:
        set_tracing_disabled(False)
    check_offered([[t.name for t in call.tools] for call in model.calls])


async def test_langchain(monkeypatch):
    pytest.importorskip("langchain.agents", reason="langchain is not installed")
    from tests.test_integration_langchain import scripted

    model = scripted(CALLS)
    assert await bake_fries("LangChain and LangGraph", monkeypatch)(model) == {"fries": "Plate#2"}
    check_offered(model.offered)


async def test_mellea(monkeypatch):
    pytest.importorskip("mellea", reason="mellea is not installed")
    from tests.test_integration_mellea import ToolCallingBackend

    backend = ToolCallingBackend(CALLS)
    assert await bake_fries("Mellea", monkeypatch)(backend) == {"fries": "Plate#2"}
    check_offered(backend.offered)
