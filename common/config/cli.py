"""The command line: ``sift SUBCOMMAND [--option VALUE]...``, built from the option table.

Values are kept as text here and read by the loader, so that a bad value gets the same message
whether it came from a flag, an environment variable or the config file.
"""

from __future__ import annotations

import argparse
import difflib
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from common.config.model import ConfigError
from common.config.options import BY_FLAG, OPTIONS, Kind, Option
from common.config.sizes import format_size

SUBCOMMANDS = ("serve", "gateway", "shard", "scheduler", "config")

_SUBCOMMAND_HELP = {
    "serve": "Run the whole engine: the gateway, the scheduler and the shard workers.",
    "gateway": "Run only the HTTP gateway (normally started by `serve`).",
    "shard": "Run only shard worker `--id K` (normally started by `serve`).",
    "scheduler": "Run only the task scheduler (normally started by `serve`).",
    "config": "Print the effective configuration, secrets masked.",
}
_SHARD_ID = "--id"


@dataclass(frozen=True)
class CommandLine:
    """The subcommand and the options given on the command line, as text (flags as ``True``)."""

    subcommand: str
    values: dict[str, str | bool]
    shard_id: str | None
    spelled: dict[str, str]
    """Option name -> the flag as written (an alias or the name), for messages."""


class _Parser(argparse.ArgumentParser):
    """Raises instead of printing and exiting, so the launcher decides how to report."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"Invalid command line: {message}. Run `{self.prog} --help` to list the options.")


class _HelpFormatter(argparse.HelpFormatter):
    """Keeps each ``[env: …]`` and ``[default: …]`` note whole, on its own line, so it stays greppable."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        lines: list[str] = []
        for line in text.splitlines():
            lines += [line] if line.startswith("[") else textwrap.wrap(line, width)
        return lines


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="sift",
        description="Sift, a search engine speaking the Meilisearch HTTP API.",
        allow_abbrev=False,
        formatter_class=_HelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")
    for name in SUBCOMMANDS:
        sub = subparsers.add_parser(
            name,
            help=_SUBCOMMAND_HELP[name],
            description=_SUBCOMMAND_HELP[name]
            + " Every option can also be set by its environment variable or in the config file.",
            allow_abbrev=False,
            formatter_class=_HelpFormatter,
        )
        if name == "shard":
            sub.add_argument(_SHARD_ID, metavar="K", dest="id", help="Shard number, from 0 to --shards - 1.")
        for option in OPTIONS:
            _add_option(sub, option)
    return parser


def parse_command_line(argv: Sequence[str]) -> CommandLine:
    _reject_flag_values(argv)
    namespace, extras = _build_parser().parse_known_args(list(argv))
    found = vars(namespace)
    subcommand: str = found.pop("subcommand")
    if extras:
        _reject_extra(subcommand, extras[0])
    shard_id = found.pop("id", None)
    if subcommand == "shard" and shard_id is None:
        raise ConfigError("`sift shard` requires `--id K`, the number of the shard to run (0 <= K < shards).")
    spelled = {}
    for token in argv:
        option = BY_FLAG.get(token.partition("=")[0])
        if option is not None:
            spelled[option.name] = token.partition("=")[0]
    return CommandLine(subcommand, found, shard_id, spelled)


def _add_option(parser: argparse.ArgumentParser, option: Option) -> None:
    aliases = f"\n[env aliases: {', '.join(option.env_vars[1:])}]" if option.aliases else ""
    help = f"{option.help}\n[env: {option.env_var}]{aliases}{_default_text(option)}".replace("%", "%%")
    common = {"dest": option.name, "default": argparse.SUPPRESS, "help": help}
    if option.kind is Kind.FLAG:
        parser.add_argument(*option.flags, action="store_true", **common)  # type: ignore[arg-type]
    elif option.kind is Kind.SNAPSHOT:
        parser.add_argument(*option.flags, nargs="?", const="true", metavar="SECONDS", **common)  # type: ignore[arg-type]
    else:
        metavar = "{" + ",".join(option.choices) + "}" if option.choices else option.kind.value
        parser.add_argument(*option.flags, metavar=metavar, **common)  # type: ignore[arg-type]


def _default_text(option: Option) -> str:
    if option.derived is not None:
        return f"\n[default: {option.derived}]"
    if option.default is None or option.kind is Kind.FLAG:
        return ""
    default = option.default
    if option.kind is Kind.SIZE and isinstance(default, int):
        default = format_size(default)
    return f"\n[default: {default}]"


def _reject_flag_values(argv: Sequence[str]) -> None:
    """argparse would report ``--flag true`` as a stray argument; say what is actually wrong."""
    for position, token in enumerate(argv):
        if token == "--":
            return
        name, equals, value = token.partition("=")
        option = BY_FLAG.get(name)
        if option is None or option.kind is not Kind.FLAG:
            continue
        following = argv[position + 1] if position + 1 < len(argv) else "-"
        if equals or not following.startswith("-"):
            given = value if equals else following
            raise ConfigError(
                f"`{name}` takes no value, but was given `{given}` on the command line: "
                f"write `{name}` alone to enable it, leave it out to keep it disabled."
            )


def _reject_extra(subcommand: str, token: str) -> NoReturn:
    if not token.startswith("-"):
        raise ConfigError(f"Unexpected argument `{token}` on the command line of `sift {subcommand}`.")
    name = token.partition("=")[0]
    if name == _SHARD_ID:
        raise ConfigError(f"`{_SHARD_ID}` is only accepted by `sift shard`, not by `sift {subcommand}`.")
    close = difflib.get_close_matches(name, BY_FLAG, n=1)
    hint = f" Did you mean `{close[0]}`?" if close else ""
    raise ConfigError(
        f"Unknown command-line option `{name}` for `sift {subcommand}`.{hint} "
        f"Run `sift {subcommand} --help` to list the options."
    )
