"""The README's Python API block runs as written, from the repository root."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import ROOT


def test_the_python_api_block_runs():
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, re.S)[:1]
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '{"result": "Potato#2"}'
