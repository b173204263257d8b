"""How a row of the ``computer-basic`` table is written: one helper per kind of check (the
kinds of :mod:`palaestra.verifiers.computer`) and per kind of task that recurs (an answer
written to a file, a file rewritten in place or moved away, an edit in the editor, a command
typed in the terminal, a chmod). The table itself is :mod:`palaestra.envs.computer.basic_tasks`.
"""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import dataclass, field
from typing import Any

HOME = "/home/user"


# ----- checks (kinds of palaestra.verifiers.computer) ----------------------------------------
def all_of(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "all", "checks": list(checks)}


def check(kind: str, path: str, **how: Any) -> dict[str, Any]:
    return {"kind": kind, "path": path, **how}


def exists(path: str, kind: str | None = None, present: bool = True) -> dict[str, Any]:
    spec = check("file_exists", path, exists=present)
    if kind:
        spec["type"] = kind
    return spec


def contents(path: str, **how: Any) -> dict[str, Any]:
    return check("file_contents", path, **how)


def output(command: str, **how: Any) -> dict[str, Any]:
    return {"kind": "command_output", "command": command, **how}


def window(exe: str, **how: Any) -> dict[str, Any]:
    """A window of the program ``exe``: the process behind it runs that executable."""
    return {"kind": "window", "exe": exe, **how}


def process(exe: str, **how: Any) -> dict[str, Any]:
    """A process of the session running the real executable ``exe``."""
    return {"kind": "process", "exe": exe, **how}


def gate(spec: dict[str, Any]) -> dict[str, Any]:
    """A check that must hold for the others to count (what the agent must leave intact)."""
    return {**spec, "gate": True}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def holding(files: dict[str, str]) -> list[dict[str, Any]]:
    """Gates: each file holds its text. An output is checked for what it holds, never for
    being there: the names alone (a tree of empty files) earn nothing."""
    return [gate(contents(path, equals=text)) for path, text in files.items()]


def intact(files: dict[str, str]) -> list[dict[str, Any]]:
    """Gates: each input file still holds its text. A task that reads or re-labels files (a
    mode, a link, a count) must not be won by emptying them first (the ``hollow``
    adversary)."""
    return [gate(check("checksum", path, sha256=sha(text))) for path, text in files.items()]


#: prints every member of an archive (``sys.argv[1]``: tar of any compression, or zip) as
#: ``name=text``, sorted, in the check's sandbox: an archive of empty files shows it
_MEMBERS = """import sys, tarfile, zipfile
p = sys.argv[1]
if zipfile.is_zipfile(p):
    z = zipfile.ZipFile(p)
    got = {i.filename: z.read(i) for i in z.infolist() if not i.is_dir()}
else:
    t = tarfile.open(p)
    got = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
for name in sorted(got):
    print(name.removeprefix("./") + "=" + got[name].decode(errors="replace").strip())
"""

#: prints every cell of a workbook's first sheet (``sys.argv[1]``, xlsx) as ``A1=value``, sorted,
#: numbers without a needless ``.0``: a workbook skeleton without the data shows it
_CELLS = """import sys, zipfile, xml.etree.ElementTree as E
z = zipfile.ZipFile(sys.argv[1])
n = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
text = lambda e: "".join(t.text or "" for t in e.iter(n + "t"))
names = z.namelist()
shared = []
if "xl/sharedStrings.xml" in names:
    shared = [text(si) for si in E.fromstring(z.read("xl/sharedStrings.xml")).iter(n + "si")]
out = []
for c in E.fromstring(z.read("xl/worksheets/sheet1.xml")).iter(n + "c"):
    v, kind = c.find(n + "v"), c.get("t")
    if kind == "s":
        value = shared[int(v.text)]
    elif kind == "inlineStr":
        value = text(c)
    else:
        value = "" if v is None else v.text or ""
        try:
            value = format(float(value), "g")
        except ValueError:
            pass
    out.append(c.get("r") + "=" + value)
print(*sorted(out), sep="\\n")
"""


def members(archive: str, files: dict[str, str]) -> dict[str, Any]:
    """The archive at ``archive`` holds exactly these members with these texts."""
    listing = "\n".join(f"{name}={text.strip()}" for name, text in sorted(files.items()))
    return output(f"python3 -c {shlex.quote(_MEMBERS)} {archive}", equals=listing, exit_code=0)


def cells(workbook: str, values: dict[str, str]) -> dict[str, Any]:
    """The first sheet of the xlsx at ``workbook`` holds exactly these cells."""
    listing = "\n".join(f"{ref}={value}" for ref, value in sorted(values.items()))
    return output(f"python3 -c {shlex.quote(_CELLS)} {workbook}", equals=listing, exit_code=0)


# ----- rows ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """A task before its group is known (the table's keys are the groups)."""

    tid: str
    instruction: str
    verifier: dict[str, Any]
    oracle: list[Any]
    setup: dict[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()


def row(
    tid: str,
    instruction: str,
    verifier: dict[str, Any],
    oracle: list[Any],
    tags: tuple[str, ...] = (),
    **setup: Any,
) -> Row:
    """A row; ``setup`` is the session's starting state (``files``, ``dirs``, ``modes``,
    ``mtimes``, ``commands``, ``apps``)."""
    return Row(tid, instruction, verifier, oracle, setup, tags)


def sh(command: str) -> list[str]:
    """The oracle of a task one shell command does."""
    return [f"run_shell({command!r})"]


def editor(path: str) -> list[list[str]]:
    """The text editor, open on ``path`` (under the home) when the task starts."""
    return [["editor", f"{HOME}/{path}"]]


TERMINAL = [["terminal"]]


def answer(
    tid: str,
    instruction: str,
    path: str,
    expected: str,
    oracle: list[Any],
    normalize: str = "text",
    others: tuple[str, ...] = (),
    **setup: Any,
) -> Row:
    """The agent finds something out (a name, a count, a sum) and writes it to ``path``: the
    file holds that one value in any format (``60.0`` for 60), and none of ``others`` (the
    other candidates), read as every family's answers are (``file_answer``); the files it was
    found in are left as they were."""
    check_: dict[str, Any] = {
        "kind": "file_answer",
        "path": path,
        "value": expected,
        "normalize": normalize,
    }
    if others:
        check_["others"] = list(others)
    verifier = all_of(check_, *intact(setup.get("files", {})))
    return row(tid, instruction, verifier, oracle, **setup)


def rewrite(
    tid: str,
    instruction: str,
    path: str,
    before: str,
    after: str,
    oracle: list[Any],
    tags: tuple[str, ...] = (),
    **setup: Any,
) -> Row:
    """The agent changes a file in place, so the file is named once: it starts as ``before``
    and must read ``after``."""
    verifier = contents(path, equals=after)
    return row(tid, instruction, verifier, oracle, tags, **setup, files={path: before})


def moved(
    tid: str,
    instruction: str,
    source: str,
    text: str,
    verifier: dict[str, Any],
    oracle: list[Any],
) -> Row:
    """The file ``source`` (holding ``text``) goes elsewhere, moved, renamed or compressed:
    what ``verifier`` checks must be there and, named once, ``source`` must be gone (a gate:
    removing the source alone earns nothing)."""
    moved_out = all_of(verifier, gate(exists(source, present=False)))
    return row(tid, instruction, moved_out, oracle, files={source: text})


def packed(tid: str, instruction: str, archive: str, files: dict[str, str], command: str) -> Row:
    """The session's ``files`` packed by the agent into ``archive``, which must hold exactly
    them (their texts as :func:`members` compares them); ``command`` is the oracle."""
    return row(tid, instruction, members(archive, files), sh(command), files=files)


def in_editor(tid: str, instruction: str, before: str, after: str, keys: list[str]) -> Row:
    """A rewrite of ~/notes.txt in the editor showing it, saved: its oracle is the GUI's keys."""
    oracle = [*keys, "key('ctrl+s')", "wait(0.5)"]
    return rewrite(
        tid,
        instruction,
        "notes.txt",
        before,
        after,
        oracle,
        tags=("gui",),
        apps=editor("notes.txt"),
    )


def in_terminal(tid: str, instruction: str, verifier: dict[str, Any], typed: str) -> Row:
    """A command typed into the terminal on screen (clicked first, to focus it)."""
    oracle = ["click(512, 400)", f"type_text({typed!r})", "wait(0.3)"]
    return row(tid, instruction, verifier, oracle, tags=("gui",), apps=TERMINAL)


def chmod(tid: str, instruction: str, path: str, text: str, before: str, after: str) -> Row:
    """A file given mode ``before`` that the agent must leave with mode ``after``."""
    return row(
        tid,
        instruction,
        all_of(check("file_mode", path, mode=after), *intact({path: text})),
        sh(f"chmod {after} ~/{path}"),
        files={path: text},
        modes={path: before},
    )


#: what a refusal says when a device is not there: "I cannot switch off Bluetooth" (the
#: instruction's words) names no cause, "this computer has no Bluetooth" does
ABSENT = ["has no", "there is no", "no bluetooth", "adapter", "hardware", "no device"]
ABSENT += ["not present", "not available", "unavailable", "missing", "not found", "without"]
ABSENT += ["does not have", "doesn't have", "no such"]
