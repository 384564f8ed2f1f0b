"""markdown-it's block-rule loggers: left alone on import, quieted only on request
(the page's runtime asks; a server or a user's process keeps its logging)."""

from __future__ import annotations

import importlib
import logging
import subprocess
import sys

import pytest
from streampace.markdown import parser as md_parser

_SAMPLE = "# Title\n\n- one\n- two *three*\n\n> quote\n\n```py\nx = 1\n```\n\n[a]: https://e.com\n"


def _rule_modules() -> list:
    return [importlib.import_module(f"markdown_it.rules_block.{rule}")
            for rule in md_parser._BLOCK_RULES]


def test_importing_the_parser_leaves_markdown_it_loggers_alone() -> None:
    # A fresh interpreter: this one may have quieted them already.
    probe = (
        "import importlib, logging\n"
        "from streampace.markdown import parser, stream\n"
        "parser.Parser().render('# t\\n\\n- a\\n', {})\n"
        "mods = [importlib.import_module('markdown_it.rules_block.' + r)"
        " for r in parser._BLOCK_RULES]\n"
        "logs = [m.LOGGER for m in mods if hasattr(m, 'LOGGER')]\n"
        "print(len(logs), all(isinstance(lg, logging.Logger) for lg in logs))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert int(out[0]) > 0 and out[1] == "True"


def test_quieted_loggers_change_no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    modules = [m for m in _rule_modules() if hasattr(m, "LOGGER")]
    for module in modules:  # restored after the test
        monkeypatch.setattr(module, "LOGGER", module.LOGGER)
    before = md_parser.Parser().render(_SAMPLE, {})
    assert md_parser.quiet_block_rule_logs() == len(modules)
    assert not any(isinstance(m.LOGGER, logging.Logger) for m in modules)
    assert md_parser.Parser().render(_SAMPLE, {}) == before
