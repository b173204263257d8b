"""A loader for OSWorld's task JSON (instruction, config steps, evaluator getter/metric/expected).

It converts what this desktop can run and reports the rest with a reason: :func:`report` is the
CLI-free answer to "which of these tasks run here, and why not the others". A converted task is
listed runnable only once validated in our sandbox (``osworld_validation.json``, keyed by a
digest of the converted task): its setup succeeds, doing nothing fails, our reference solution
passes, and every adversary of the computer family fails; otherwise the report says which of
these did not hold, with the setup's own error.

Decisions:

- Config ``execute``/``command`` steps: a ``python -c "import pyautogui; ..."`` step becomes GUI
  actions (parsed, never executed; coordinates scaled from OSWorld's 1920x1080 screen to ours);
  a command given as a list (an argv, OSWorld's ``shell: false``) becomes the same command
  shell-quoted (``shlex.join``), never its Python repr; a shell step runs in the sandbox as the
  user, with OSWorld's ``echo password | sudo -S`` and
  ``sudo`` prefixes removed (the sandbox user owns its home, which is all these steps touch).
  ``sleep`` is dropped (a reset waits until the screen is still). Any step needing package
  installation, GNOME services, audio, systemd or root makes a task unsupported.
- ``download`` steps and gold ``cloud_file`` getters read the download cache
  (``osworld_cache.py``; no network here): a task whose files the cache lacks is unsupported
  with the URLs it needs (:attr:`Conversion.needs`). The office domains' steps (``download``,
  ``open``, ``launch``) and document metrics are ``osworld_office.py``'s.
- The sandbox has a session D-Bus and dconf, so ``gsettings`` and ``xdg-settings`` work in
  config steps and evaluators as on OSWorld's Ubuntu (a check reads dconf's database file).
- Evaluators: ``exact_match`` and ``check_include_exclude`` over ``vm_command_line`` become
  ``command_output`` checks (run by the verifier in a fresh read-only sandbox that sees the
  agent's processes); ``infeasible``
  becomes ``agent_status == "fail"``, whose reason must name the missing item when
  ``osworld_oracles.json`` says which (``_refusal_mentions``), and give the cause that blocks
  (``_refusal_causes``, less any phrase the instruction itself uses). Where OSWorld's checker
  reads only that an output exists, ``_strict_checks`` adds ours (a moved file's source is
  gone): stricter than OSWorld, never looser. ``vm_terminal_output`` (GNOME
  Terminal's text through the accessibility tree), other metrics, and empty evaluators are
  reported as unsupported.
- For an infeasible task the config only sets the scene: steps that cannot run are skipped
  rather than rejecting the task, since only the agent's refusal is scored.
- OSWorld tasks have no oracles; ``osworld_oracles.json`` beside this file holds ours (action
  lists, played by the ``replay`` policy), keyed by task id, for the tasks that run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palaestra.envs.computer import osworld_office as office
from palaestra.envs.computer.actions import parse_pyautogui
from palaestra.envs.computer.osworld_cache import Cache
from palaestra.envs.computer.suites import task_key
from palaestra.errors import ActionError
from palaestra.tasks import Oracle, PublicMetadata, Task
from palaestra.verifiers.validation import ValidationRecord

ENV_ID = "palaestra/computer-v0"
ORACLES = Path(__file__).with_name("osworld_oracles.json")
#: the key of ``osworld_oracles.json`` that maps an infeasible task to the words one of which
#: its refusal must name (the missing item), so that one fixed refusal does not pass them all
MENTIONS = "_refusal_mentions"
#: ... and to the phrases one of which must give the cause that blocks ("has no", "needs
#: root"): a refusal in the instruction's own words names the item but no cause
CAUSES = "_refusal_causes"
#: checks of ours added to OSWorld's where its checker reads that an output exists, not what
#: it is (a move leaves no source behind): stricter than OSWorld, never looser
STRICT = "_strict_checks"
#: the last validation run of the converted tasks (``palaestra validate osworld-os --record``)
RECORD = ValidationRecord(
    Path(__file__).with_name("osworld_validation.json"),
    "osworld-os",
    task_key,
    family="computer",
    candidates="palaestra.envs.computer.osworld:candidates",
)
OSWORLD_SCREEN = (1920, 1080)
#: the task domains the loader reads (the folders of OSWorld's ``evaluation_examples``)
DOMAINS = ("os", *office.DOMAINS)
SCREEN = (1024, 768)
#: commands a step may use that this desktop cannot offer, and why
_NEEDS = {
    "apt-get": "installs packages (needs the network and root)",
    "apt": "installs packages (needs the network and root)",
    "aptget": "installs packages (needs the network and root)",
    "pip": "installs packages (needs the network)",
    "dpkg": "checks installed Debian packages (package management needs root)",
    "pactl": "needs an audio server (PulseAudio)",
    "pulseaudio": "needs an audio server (PulseAudio)",
    "timedatectl": "needs systemd (timedatectl)",
    "gio": "uses GNOME's GIO trash",
    "loginctl": "needs systemd-logind",
    "chsh": "changes the login shell (needs root)",
    "su": "switches users (needs root)",
    "curl": "needs the network",
    "wget": "needs the network",
}
_SUDO = re.compile(r"echo\s+'?password'?\s*\|\s*sudo\s+-S\s+|\bsudo\s+(-S\s+)?")
_OUTSIDE = re.compile(r"(?<![\w~.$/-])(/(?!home/user\b|dev/null\b|tmp\b|usr/|bin/|etc/)[\w.-]+)")


@dataclass
class Conversion:
    task_id: str
    task: Task | None = None
    reasons: list[str] = field(default_factory=list)
    #: the URLs the task downloads that the download cache does not hold
    needs: list[str] = field(default_factory=list)


def default_dir(domain: str = "os") -> Path | None:
    """A domain's task folder: ``PALAESTRA_OSWORLD_DIR`` (the ``os`` domain's folder, or a
    folder holding one per domain), else the shared examples beside the repo or at
    /work/shared."""
    repo = Path(__file__).resolve().parents[2]
    given = os.environ.get("PALAESTRA_OSWORLD_DIR", "")
    candidates = [str(Path(given) / domain) if given else ""]
    candidates += [given] if domain == "os" else []
    candidates += [
        str(repo.parent / "shared/osworld/examples" / domain),
        f"/work/shared/osworld/examples/{domain}",
    ]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    return None


def _commands_needing(text: str) -> list[str]:
    words = set(re.findall(r"(?:^|[\s;|&(`$])([a-z][\w.-]*)", text))
    return [f"`{w}` {_NEEDS[w]}" for w in sorted(words) if w in _NEEDS]


def _shell(step: dict[str, Any]) -> str | list[str] | None:
    params = step.get("parameters") or {}
    cmd = params.get("command")
    if isinstance(cmd, list) and len(cmd) >= 3 and cmd[0].startswith("python") and cmd[1] == "-c":
        return cmd  # a pyautogui script
    return _argv(cmd)


def _argv(cmd: Any) -> str:
    """A command as a shell line: a list is an argv (quoted), anything else its text."""
    if isinstance(cmd, list):
        return shlex.join(str(c) for c in cmd)
    return str(cmd or "")


def _scale(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    sx, sy = SCREEN[0] / OSWORLD_SCREEN[0], SCREEN[1] / OSWORLD_SCREEN[1]
    for a in actions:
        for kx, ky in (("x", "y"), ("x2", "y2")):
            if kx in a["args"]:
                a["args"][kx] = min(int(a["args"][kx] * sx), SCREEN[0] - 1)
                a["args"][ky] = min(int(a["args"][ky] * sy), SCREEN[1] - 1)
    return actions


def convert(
    data: dict[str, Any], oracles: dict[str, Any] | None = None, cache: Cache | None = None
) -> Conversion:
    """One OSWorld task as ours, or the reasons it cannot be (``cache``: where downloads come
    from, by default ``PALAESTRA_OSWORLD_CACHE``'s folder)."""
    tid = str(data.get("id", "?"))
    files = office.Files(cache or Cache())
    out = Conversion(tid, needs=files.missing)
    ev = data.get("evaluator") or {}
    func = ev.get("func")
    infeasible = func == "infeasible"
    setup: dict[str, Any] = {"binary": {}, "apps": [], "commands": [], "gui": []}
    skipped: list[str] = []

    def problem(reason: str) -> None:
        (skipped if infeasible else out.reasons).append(reason)

    for step in data.get("config") or []:
        kind = step.get("type")
        if kind == "sleep":
            continue
        if kind in office.STEPS:
            for reason in office.STEPS[kind](step, files, setup):
                problem(reason)
        elif kind in ("execute", "command"):
            cmd = _shell(step)
            if isinstance(cmd, list):
                try:
                    setup["gui"] += _scale(parse_pyautogui(cmd[2]))
                except ActionError as exc:
                    problem(f"config script is not plain pyautogui: {exc.detail}")
                continue
            text = _SUDO.sub("", str(cmd or ""))
            needs = _commands_needing(text)
            if needs:
                problem("config " + "; ".join(needs))
            else:
                setup["commands"].append(text)
        else:
            problem(f"config step {kind!r} is not supported")

    verifier: dict[str, Any] | None = None
    if not func:
        out.reasons.append("no evaluator (func is empty): the task cannot be scored")
    elif infeasible:
        status: dict[str, Any] = {"kind": "agent_status", "status": "fail"}
        mentions = (oracles or {}).get(MENTIONS, {}).get(tid)
        if mentions:  # what a refusal must name (ours)
            status["reason_mentions"] = mentions
        asked = str(data.get("instruction", "")).lower()
        causes = [c for c in (oracles or {}).get(CAUSES, {}).get(tid, []) if c not in asked]
        if causes:  # a cause the instruction itself says is no cause
            status["reason_causes"] = causes
        verifier = {"kind": "all", "checks": [status]}
    elif office.reads_documents(ev):
        verifier, reasons = office.evaluator(ev, files, setup)
        out.reasons += reasons
    else:
        for step in ev.get("postconfig") or []:
            if step.get("type") != "sleep":
                does = {
                    "download": "downloads its checker (no network)",
                    "execute": "drives GNOME Terminal before scoring",
                }.get(step.get("type"), "is not supported")
                out.reasons.append(f"evaluator postconfig step {step.get('type')!r} {does}")
                break
        result = ev.get("result") or {}
        rules = (ev.get("expected") or {}).get("rules") or {}
        if result.get("type") == "vm_terminal_output":
            out.reasons.append(
                "evaluator reads the terminal's text (vm_terminal_output, GNOME's accessibility "
                "tree), which this desktop does not expose"
            )
        elif result.get("type") != "vm_command_line":
            out.reasons.append(f"evaluator getter {result.get('type')!r} is not supported")
        elif func not in ("exact_match", "check_include_exclude"):
            out.reasons.append(f"evaluator metric {func!r} is not implemented")
        else:
            command = _argv(result.get("command", ""))
            needs = _commands_needing(command)
            outside = _OUTSIDE.findall(command)
            if needs:
                out.reasons.append("evaluator " + "; ".join(needs))
            elif outside:
                out.reasons.append(
                    f"evaluator checks {outside[0]}, outside the home: the sandbox's system is "
                    "read-only and there is no root"
                )
            elif func == "exact_match":
                verifier = _check(command, equals=rules.get("expected", ""), strip=False)
            else:
                verifier = _check(
                    command,
                    contains=rules.get("include", []),
                    not_contains=rules.get("exclude", []),
                )
    if files.missing:
        problem(files.reason())
    if out.reasons or verifier is None:
        return out
    strict = (oracles or {}).get(STRICT, {}).get(tid)
    if strict:
        verifier = {"kind": "all", "checks": [*verifier.get("checks", [verifier]), *strict]}
    oracle = (oracles or {}).get(tid)
    out.task = Task(
        id=tid,
        family="computer",
        env=ENV_ID,
        instruction=str(data.get("instruction", "")),
        setup={k: v for k, v in setup.items() if v},
        verifier=verifier,
        max_steps=30,
        public=PublicMetadata(domain=str(data.get("snapshot", "os"))),
        metadata={
            "source": "OSWorld (xlang-ai, Apache-2.0)",
            "domain": data.get("snapshot", "os"),
            "related_apps": data.get("related_apps", []),
            "skipped_config": skipped,
            "tags": ["computer", "osworld"] + (["infeasible"] if infeasible else []),
        },
        oracle=None if oracle is None else Oracle(policy="replay", data=oracle),
    )
    return out


def _check(command: str, **how: Any) -> dict[str, Any]:
    return {"kind": "all", "checks": [{"kind": "command_output", "command": command, **how}]}


def load_dir(folder: Path | None = None, cache: Cache | None = None) -> list[Conversion]:
    """Every task JSON of a folder (by default the ``os`` domain's), converted."""
    folder = folder or default_dir()
    if folder is None:
        return []
    oracles = json.loads(ORACLES.read_text()) if ORACLES.exists() else {}
    return [
        convert(json.loads(p.read_text()), oracles, cache) for p in sorted(folder.glob("*.json"))
    ]


def candidates(folder: Path | None = None) -> list[Task]:
    """The converted tasks that have a reference solution of ours: what validation runs."""
    return [c.task for c in load_dir(folder) if c.task is not None and c.task.oracle is not None]


def report(
    folder: Path | None = None,
    record: ValidationRecord | None = None,
    cache: Cache | None = None,
) -> dict[str, Any]:
    """Which tasks run here and, for the others, why not: ``unsupported`` could not be
    converted (``needs``: the URLs each of those lacks in the download cache); ``unvalidated``
    were converted but are not (yet) proven sound in our sandbox (no reference solution, never
    validated, or the validation's first failure). Only ``runnable`` tasks are in a suite."""
    record = record or RECORD
    recorded = record.load().get("tasks", {})
    runnable, unsupported, unvalidated, needs = [], {}, {}, {}
    for c in load_dir(folder, cache):
        if c.task is None:
            unsupported[c.task_id] = "; ".join(c.reasons)
            if c.needs:
                needs[c.task_id] = c.needs
            continue
        entry = recorded.get(c.task_id)
        if c.task.oracle is None:
            unvalidated[c.task_id] = f"no reference solution of ours ({ORACLES.name})"
        elif entry is None or entry.get("key") != task_key(c.task):
            unvalidated[c.task_id] = "not validated in this sandbox since it last changed"
        elif not entry.get("validated"):
            unvalidated[c.task_id] = f"validation failed: {entry.get('reason')}"
        else:
            runnable.append(c.task_id)
    return {
        "total": len(runnable) + len(unsupported) + len(unvalidated),
        "runnable": runnable,
        "unsupported": unsupported,
        "unvalidated": unvalidated,
        "needs": needs,
    }


def load_suite() -> list[Task]:
    """The registered loader: the converted tasks the recorded validation run proved."""
    return RECORD.validated(candidates())


def main() -> None:
    """``python -m palaestra.envs.computer.osworld``: print the report of every domain found
    (``palaestra osworld report`` prints it as tables)."""
    for domain in DOMAINS:
        folder = default_dir(domain)
        if folder is None:
            continue
        rep = report(folder)
        print(f"{domain}: {len(rep['runnable'])} of {rep['total']} tasks run on this desktop")
        for tid, reason in {**rep["unsupported"], **rep["unvalidated"]}.items():
            print(f"- {tid}: {reason}")


if __name__ == "__main__":
    main()
