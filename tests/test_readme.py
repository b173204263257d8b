"""The docs' examples run as written against a real gateway.

Every ```python and ```bash block of README.md, docs/*.md and envs/*/README.md runs; blocks
fenced with another tag (```sh, ```text, ```js, ...) or none are shown only. In both languages a
``# -> ...`` comment says exactly what is printed there: a Python ``print(`` line with one shows
that line; in bash the comments, in order, are every line the block prints.
"""

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCS += sorted((ROOT / "envs").glob("*/README.md"))


def _blocks(lang):
    """(id, code) of every block fenced as ``lang``, the id naming its file and line."""
    found = []
    for doc in DOCS:
        text = doc.read_text()
        for match in re.finditer(rf"^```{lang}\n(.*?)^```", text, re.S | re.M):
            line = text.count("\n", 0, match.start()) + 1
            found.append(pytest.param(match.group(1), id=f"{doc.relative_to(ROOT)}:{line}"))
    return found


def test_examples_are_found():
    # the README held 11 Python examples and 1 curl example before the docs were split
    assert len(_blocks("python")) + len(_blocks("bash")) >= 12


@pytest.mark.parametrize("code", _blocks("python"))
def test_python_examples(code, gateway, monkeypatch, request):
    monkeypatch.setenv("PALAESTRA_URL", gateway)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, request.node.callspec.id, "exec"), {})
    # a "# -> ..." comment says exactly what that print shows
    prints = [c for c in code.splitlines() if c.startswith("print(")]
    printed = out.getvalue().splitlines()
    assert len(printed) == len(prints)
    for line, shown in zip(prints, printed, strict=True):
        if "# -> " in line:
            assert shown == line.split("# -> ", 1)[1]


@pytest.mark.parametrize("script", _blocks("bash"))
def test_bash_examples(script, gateway):
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        # the venv's bin first: examples run the ``palaestra`` command as a user would
        env={"PALAESTRA_URL": gateway, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    shown = re.findall(r"# -> (.*)$", script, re.M)
    assert result.stdout.splitlines() == shown
