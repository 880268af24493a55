"""What the command line says to the mistakes of a first hour: a mistyped command (`dagtools tool`),
words a command does not take, said by that command with what was probably meant, and advice worded
for Python put in the command line's words."""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["in_command_line_words", "mistyped_command", "unrecognized"]


def unrecognized(parser: argparse.ArgumentParser, command: str, extras: list[str]) -> NoReturn:
    """Words the command does not take, said by the command itself (its usage, not the top-level one)
    with what was probably meant: a close option of this command, the commands an option belongs to,
    or quotes around a value of several words."""
    import difflib

    commands = next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    own: argparse.ArgumentParser = commands[command]
    hints = []
    loose = False  # a word that is no option's value
    for index, extra in enumerate(extras):
        if not extra.startswith("-"):
            loose = loose or index == 0 or not extras[index - 1].startswith("-")
        elif len(extra) > 1:
            option = extra.split("=", 1)[0]
            owners = [name for name, sub in commands.items() if name != command and option in sub._option_string_actions]
            # compared without their dashes, which every long option shares: --bogus is not close to --verbose
            longs = {o.lstrip("-"): o for o in own._option_string_actions if o.startswith("--")}
            close = [longs[c] for c in difflib.get_close_matches(option.lstrip("-"), list(longs), n=1)]
            if option in parser._option_string_actions:
                hints.append(f"{option} goes before the command: dagtools {option} {command} ...")
            elif close:
                hints.append(f"{option}: did you mean {close[0]}?")
            elif owners:
                hints.append(f"{option} is an option of dagtools {', '.join(owners)}, not of dagtools {command}")
    if loose and any(action.dest == "prompt" for action in own._positionals._group_actions):
        hints.append('a value of several words, such as a prompt, goes in quotes: "bake the fries"')
    elif loose and any(action.dest == "lines" for action in own._actions):
        hints.append("a line of several words goes in one pair of quotes after -c: -c 'Type_field name=value'")
    said = f"unrecognized arguments: {' '.join(extras)}"
    own.error(f"{said} ({'; '.join(hints)})" if hints else said)


def mistyped_command(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """What to say when the first word is no command but looks like one (`dagtools tool`), else None
    (argparse's own message covers the rest)."""
    import difflib

    word = next((a for a in argv if not a.startswith("-")), None)
    commands = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    if word is None or word in commands or argv.index(word) != len([a for a in argv[: argv.index(word)] if a.startswith("-")]):
        return None
    close = difflib.get_close_matches(word, sorted(commands), n=2, cutoff=0.6)
    if not close:
        return None
    return f"there is no command {word!r}; did you mean {' or '.join(repr(c) for c in close)}? (`dagtools --help` lists them all)"


def in_command_line_words(error: Exception, args: argparse.Namespace) -> str:
    """The error as the command line says it: a strict load's refusal names the option that asked for
    it, not the Python keyword."""
    text = str(error)
    if "lenient=True" in text and (getattr(args, "strict", False) or getattr(args, "config", None)):
        from ..load._build import LENIENT_ADVICE

        instead = "run without --strict" if args.strict else f"set lenient: true in {args.config}"
        text = text.replace(LENIENT_ADVICE, instead)
    return text
