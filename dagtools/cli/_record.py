"""`dagtools demo --json`: the fries script replayed and written back out as a script, with what each
call gave as its expectation. `dagtools call` replays the printed text as it is, and `--model
script:FILE` plays it as a model, so what the demo did can be run again, anywhere, and checked.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .._words import counted

__all__ = ["record_script"]


async def record_script(source: Any, script_path: str, options: dict[str, Any]) -> int:
    """Replay `script_path` on `source` and print it as a script (JSON, which is also YAML) whose every
    call expects what it gave. A call that went other than the script said is told on stderr."""
    from ..scripts._script import load_script, run_script
    from ..session._open import open_session

    script = load_script(script_path)
    calls: list[dict[str, Any]] = []
    failures = 0
    async with await open_session(source, inputs=script.inputs, outputs=script.outputs, **options) as session:
        async for record in run_script(session, script):
            item: dict[str, Any] = {"tool": record.call.name, "arguments": record.call.arguments}
            if record.result.is_error:
                item["expect_error"] = True
            else:
                item["expect"] = record.result.value
            calls.append(item)
            if record.problem:
                failures += 1
                print(f"dagtools: {record.problem}", file=sys.stderr)
        recorded = {"inputs": script.inputs, "outputs": script.outputs, "calls": calls}
        print(json.dumps(recorded, ensure_ascii=False, indent=1))
        print(f"dagtools: {counted(len(calls), 'call')}; saved {json.dumps(session.saved, ensure_ascii=False)}", file=sys.stderr)
    return 1 if failures else 0
