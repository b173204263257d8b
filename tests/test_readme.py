"""The README's examples run as written against a real gateway."""

import contextlib
import io
import json
import re
import subprocess
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


@pytest.mark.parametrize("code", _blocks("python"))
def test_python_examples(code, gateway, monkeypatch):
    monkeypatch.setenv("PALAESTRA_URL", gateway)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    # a "# -> ..." comment says exactly what that print shows
    prints = [c for c in code.splitlines() if c.startswith("print(")]
    printed = out.getvalue().splitlines()
    assert len(printed) == len(prints)
    for line, shown in zip(prints, printed, strict=True):
        if "# -> " in line:
            assert shown == line.split("# -> ", 1)[1]


def test_curl_example(gateway):
    (script,) = _blocks("bash")
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env={"PALAESTRA_URL": gateway, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert json.loads(lines[-1]) == [1.0, True] and '"count":3' in lines[-2]
