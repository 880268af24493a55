"""The "Agent frameworks" page (docs/integrations.md) runs as shown: the kitchen block and one framework's block,
in a fresh interpreter as a reader runs them, bake the fries through a real OpenAI-compatible Chat
Completions server on loopback (tests/fake_models.py, playing the fries script) and print what the
model saved, with no warning on the way."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_models import FakeServer, openai_server  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]

#: The module each block needs, and the extra that installs it.
NEEDS = {
    "pydantic-ai": ("pydantic_ai", "pydantic-ai"),
    "OpenAI Agents SDK": ("agents", "openai-agents"),
    "LangChain and LangGraph": ("langchain_openai", "langchain"),
    "Mellea": ("mellea", "mellea"),
}
#: What the server notes that only dagtools' own client promises (its system prompt first, an explicit
#: tool_choice, no `content: null`); a framework may send those its own way, as the API allows.
DAGTOOLS_ONLY = ("the first message is not the system prompt", "tool_choice is", "content null")


def section_blocks() -> tuple[str, dict[str, str]]:
    """The shared block, and each subsection's block by its heading."""
    page = (ROOT / "docs" / "integrations.md").read_text()
    shared, *subsections = page.split("\n## ")
    block = re.compile(r"```python\n(.*?)```", re.S)
    blocks = {}
    for subsection in subsections:
        heading = subsection.splitlines()[0]
        [code] = block.findall(subsection)
        blocks[heading] = code
    [shared_code] = block.findall(shared)
    return shared_code, blocks


def test_the_section_has_one_block_per_framework():
    assert list(section_blocks()[1]) == list(NEEDS)


@pytest.mark.parametrize("heading", list(NEEDS))
def test_the_example_runs_against_a_local_server(heading: str, openai_server: FakeServer):  # noqa: F811
    module, extra = NEEDS[heading]
    pytest.importorskip(module, reason=f"the {extra} extra is not installed: pip install -e '.[{extra}]'")
    shared, blocks = section_blocks()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    env.update(OPENAI_BASE_URL=openai_server.url, OPENAI_API_KEY="test-key", MODEL="local-model")
    run = subprocess.run(
        [sys.executable, "-"], input=shared + "\n" + blocks[heading], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "{'fries': 'Plate#2'}", run.stdout[-2000:]
    assert "warning" not in (run.stdout + run.stderr).lower(), (run.stdout + run.stderr)[-3000:]
    assert len(openai_server.requests) == 9  # eight turns of calls and the closing answer
    problems = [p for p in openai_server.problems if not any(known in p for known in DAGTOOLS_ONLY)]
    assert problems == []  # every turn offered the tools it needed, every call got its tool message
