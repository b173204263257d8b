"""The gateway program is the server's own (``python -m palaestra.server``): the CLI's
``palaestra serve`` is the same function, and the program starts without the CLI above it.
(``server.runner.gateway_process`` starts it for real in test_failures and test_api_hygiene.)"""

from __future__ import annotations

import subprocess
import sys

from palaestra.cli import app
from palaestra.server import program


def test_palaestra_serve_is_the_server_program() -> None:
    (command,) = [c for c in app.registered_commands if c.callback is program.serve]
    assert command.name in (None, "serve")


def test_the_program_imports_no_cli_and_its_options_no_fastapi() -> None:
    code = (
        "import sys; import palaestra.server.program; "
        "print(sorted(m for m in sys.modules if m.startswith('palaestra.cli') or m == 'fastapi'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    help_text = subprocess.run(
        [sys.executable, "-m", "palaestra.server", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--runs-dir" in help_text and "palaestra.server" in help_text


def test_the_options_show_the_settings_own_defaults() -> None:
    """--port, --workers and --backend show what Settings falls back to (read from it, so a
    new default there cannot leave the help saying the old one)."""
    import re
    import typing

    from palaestra.server.settings import Settings

    hints = typing.get_type_hints(program.serve, include_extras=True)
    for name in ("port", "workers", "backend"):
        (option,) = hints[name].__metadata__
        shown = re.search(r"\\\[default: ([^\]]+)\]", option.help)
        assert shown and shown.group(1) == str(Settings.model_fields[name].default), name
