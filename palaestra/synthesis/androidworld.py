"""The maker of the AndroidWorld replica suites, ``androidworld-replica`` and its web layout.

AndroidWorld's task templates are re-hosted as templates of synthesized replicas of its apps
(``synth_apps/replicas/<app>.yaml``, each template named as AndroidWorld names it). This maker
grounds every template of every replica for seeds ``0..N-1`` (and each seed's ask-the-user
variant when the template has one), validates each task on the embedded phone exactly as the
``phone`` suite's tasks are validated (the validation service: the oracle three times, doing
nothing, the mutants, the adversaries and the adversary search) and commits the validated ones,
each with its report, beside the loader (:mod:`palaestra.envs.mobile.suites`), with the dropped
ones and their reasons::

    python -m palaestra.synthesis.androidworld [--apps markor,broccoli] [--seeds 3]
        [--parallel 1] [--web] [--llm-url URL]

It is incremental: a task whose key (:func:`~palaestra.envs.mobile.suites.replica_key`: the task,
its mutants and the spec files it uses) and whose family's code digest are those of the last run
keeps its verdict, validated or dropped, without being played again; ``--apps`` re-makes those
apps' tasks only and keeps every other app's entries as they are. ``--web`` makes the web-layout
suite (``web: true`` apps, desktop layout, validated in the browser) into its own file.

With an LLM endpoint (``--llm-url``), each seed's task also gets a reworded twin,
``<Template>/<seed>-llm``: the model's wording of the instruction, kept only when it states
every grounded value verbatim, then validated like any task. A model does not reword the same
way twice, so the file keeps each twin's wording (its task, or its drop's ``instruction``) and a
later run, with or without an endpoint, validates that wording again instead of asking anew.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from palaestra.envs.mobile.suites import REPLICA, REPLICA_FILES, REPLICA_WEB, replica_key
from palaestra.synth_apps.answer_checks import YES_NO
from palaestra.synth_apps.generate import UNLESS, Generated, GenerationError, TaskGenerator
from palaestra.synth_apps.spec import AppSpec, TaskTemplate, load_spec, replica_names
from palaestra.synthesis.pipeline import EnvPool, drop_entry, on_phone
from palaestra.tasks import PublicMetadata
from palaestra.validation import code_digest, validate_task

#: seeds per template (each also gives an ask variant where the template has one)
SEEDS = 3


@dataclass(frozen=True)
class Layout:
    """One suite of the replicas: its name, file, the family validating it and the layout."""

    suite: str
    family: str
    layout: str

    @property
    def file(self) -> Path:
        return REPLICA_FILES[self.suite]


PHONE = Layout(REPLICA, "mobile", "mobile")
WEB = Layout(REPLICA_WEB, "web", "desktop")


@dataclass
class Candidate:
    """A task the suite may hold: its id and template, and the task made (None: it could not
    be grounded, ``error`` says why)."""

    id: str
    app: str
    template: str
    made: Generated | None = None
    error: str = ""


#: the id suffix of an LLM-reworded twin
LLM = "-llm"


def task_id(template: str, seed: int, ask: bool) -> str:
    return f"{template}/{seed}{'-ask' if ask else ''}"


class Rewording(Protocol):
    """What the maker needs of an LLM author (:class:`~palaestra.synth_apps.llm.LLMAuthor`)."""

    def paraphrase(self, instruction: str, keep: list[str]) -> str | None: ...


def reworded_twins(
    cands: list[Candidate], recorded: Mapping[str, str], author: Rewording | None
) -> Iterator[Candidate]:
    """The ``-llm`` twin of each grounded seed task (not the ask variants, whose wording must
    leave a detail out): the wording ``recorded`` for it while it still states every grounded
    value, else the ``author``'s (none without an author, or when the model drops a value)."""
    for cand in cands:
        if cand.made is None or cand.id.endswith("-ask"):
            continue
        made, tid = cand.made, cand.id + LLM
        # the closing "say why" every operation task carries stays as it is
        request = made.task.instruction.removesuffix(UNLESS).rstrip()
        unless = f" {UNLESS}" if request != made.task.instruction else ""
        wording = recorded.get(tid)
        if not (wording and all(v in wording for v in made.values)):
            wording = author.paraphrase(request, made.values) if author is not None else None
            wording = f"{wording.rstrip()}{unless}" if wording else None
        if not wording:
            continue
        task = made.task.model_copy(deep=True)
        task.id, task.instruction = tid, wording
        task.metadata["wording"] = "llm"
        twin = Generated(task, made.mutations, made.values)
        yield Candidate(tid, cand.app, cand.template, twin)


def candidates(
    specs: Mapping[str, AppSpec], seeds: int, layout: Layout = PHONE
) -> Iterator[Candidate]:
    """Every (template, seed, ask) of the apps (``specs``: the name a task's setup gives, a
    replica's name or a spec file, -> its spec), grounded; an app without ``web: true`` has no
    web-layout tasks."""
    for ref, spec in specs.items():
        if layout is WEB and not spec.web:
            continue
        for template in spec.tasks:
            if layout is WEB and not on_the_web(spec, template):
                continue
            name = str(template.name)
            asks = (False, True) if template.ask else (False,)
            earlier: dict[tuple[bool, str], str] = {}
            for seed in range(seeds):
                for ask in asks:
                    tid = task_id(name, seed, ask)
                    try:
                        made = _generate(ref, spec, name, seed, ask, layout)
                    except GenerationError as exc:
                        yield Candidate(tid, spec.name, name, error=f"cannot generate: {exc}")
                        continue
                    again = repeats(made, ask, earlier)
                    if again:
                        yield Candidate(tid, spec.name, name, error=again)
                        continue
                    yield Candidate(tid, spec.name, name, finish(made, tid, spec, name, layout))


def repeats(made: Generated, ask: bool, earlier: dict[tuple[bool, str], str]) -> str:
    """Why a seed's task adds nothing to the template's earlier seeds (empty: it does): it is
    the same task (a template without parameters), or a question whose answer an earlier seed
    already had, which a policy could learn from the template and give without looking (a
    yes/no answer aside: two values must repeat, and it counts only after a look). Ask
    variants are compared with ask variants. ``earlier`` collects the template's tasks."""
    task = made.task
    plan = (
        task.oracle.data if task.oracle is not None and isinstance(task.oracle.data, list) else []
    )
    said = [str(step.get("text")) for step in plan if step.get("op") == "say"]
    keys = {"task": json.dumps([task.instruction, task.setup, task.verifier], sort_keys=True)}
    if said and said[-1] not in YES_NO:
        keys["answer"] = said[-1]
    for what, key in keys.items():
        first = earlier.get((ask, f"{what}:{key}"))
        if first and what == "task":
            return f"the same task as {first}"
        if first:
            return f"answers {key!r} as {first} does: a repeated answer is learnt, not looked up"
    earlier.update({(ask, f"{what}:{key}"): task.id for what, key in keys.items()})
    return ""


def on_the_web(spec: AppSpec, template: TaskTemplate) -> bool:
    """Whether a template's task can be a web task: a web page is one app, so not a task that
    plants rows in another app or must end with another app in front (the phone's launcher)."""
    others = {row.app for row in template.plant if row.app and row.app != spec.name}
    return not others and template.end_in is None


def _generate(
    ref: str, spec: AppSpec, template: str, seed: int, ask: bool, layout: Layout
) -> Generated:
    """One task of ``template`` for ``seed`` (its ask variant with ``ask``), generated for the
    app ``ref`` names (what the task's setup says)."""
    return TaskGenerator.for_template(
        template, seed, ask=ask, layout=layout.layout, specs={ref: spec}
    )


def finish(made: Generated, tid: str, spec: AppSpec, template: str, layout: Layout) -> Generated:
    """The generated task as the suite ships it: its id, its family's env, and what is public
    (the real app's name and the AndroidWorld template, which the id carries anyway)."""
    task = made.task
    if layout.family == "mobile":
        on_phone(task)
    task.id = tid
    task.public = PublicMetadata(
        app=spec.replica_of.app if spec.replica_of else spec.title,
        domain=template,
        difficulty=task.public.difficulty,
    )
    task.metadata.update(aw_template=template, suite=layout.suite)
    return made


def build(
    apps: list[str] | None = None,
    *,
    seeds: int = SEEDS,
    parallel: int = 1,
    layout: Layout = PHONE,
    out: Path | None = None,
    specs: Mapping[str, AppSpec] | None = None,
    on_progress: Callable[[int, int, str], None] | None = None,
    retry_drops: bool = False,
    author: Rewording | None = None,
) -> dict[str, Any]:
    """Make (or bring up to date) a replica suite file: ``apps`` (all replicas when None) are
    re-made, every other app's entries kept. ``specs`` (name -> spec) stand in for the shipped
    replicas (tests). ``retry_drops``: the dropped tasks are validated again even where nothing
    changed (a verdict lost to a flaky run), the validated ones kept. ``author``: new ``-llm``
    twins are worded by it (the recorded ones are kept either way). Returns the file's
    content."""
    out = out or layout.file
    if specs is None:
        names = apps or replica_names()
        unknown = sorted(set(names) - set(replica_names()))
        if unknown:
            raise SystemExit(f"no replica app {unknown}; replicas: {replica_names()}")
        specs = {n: load_spec(n) for n in names}
    elif apps:
        specs = {ref: s for ref, s in specs.items() if s.name in apps}
    remade = {s.name for s in specs.values()}
    code = code_digest(layout.family)  # before the run: an edit during it is not validated
    old = _read(out)
    before = {t["id"]: t for t in old.get("tasks", [])}
    before_drops = {d["task"]: d for d in old.get("drops", [])}
    started = time.perf_counter()
    tasks: list[dict[str, Any]] = []  # the remade apps' entries (the others stay as they are)
    drops: list[dict[str, Any]] = []
    todo: list[tuple[Candidate, str]] = []
    made = list(candidates(specs, seeds, layout))
    wordings = {
        tid: str(entry["instruction"])
        for tid, entry in [*before.items(), *before_drops.items()]
        if tid.endswith(LLM) and entry.get("instruction")
    }
    for cand in [*made, *reworded_twins(made, wordings, author)]:
        if cand.made is None:
            drops.append({"task": cand.id, "app": cand.app, "reason": cand.error})
            continue
        key = replica_key(cand.made.task, cand.made.mutations)
        was = before.get(cand.id, {}).get("validation") or {}
        dropped = before_drops.get(cand.id, {})
        if (was.get("key"), was.get("code")) == (key, code):
            tasks.append(before[cand.id])
        elif (dropped.get("key"), dropped.get("code")) == (key, code) and not retry_drops:
            drops.append(dropped)
        else:
            todo.append((cand, key))
    # breadth first: every template's seed 0 before any seed 1, so a run stopped early (or
    # committed in pieces) covers the most templates
    todo.sort(key=lambda item: _seed_order(item[0].id))
    notify = on_progress or (lambda done, total, tid: None)
    notify(0, len(todo), "")
    payload = _save(out, layout, seeds, remade, tasks, drops, started, len(todo))
    for cand, key, result in _validate(todo, layout, parallel, notify):
        assert cand.made is not None
        if result.validated:
            cand.made.task.validation = {
                **result.to_json(),
                **{"mutations": cand.made.mutations, "key": key, "code": code},
            }
            tasks.append(cand.made.task.model_dump(mode="json"))
        else:
            drop = {"app": cand.app, "key": key, "code": code, "seconds": result.seconds}
            if cand.id.endswith(LLM):  # the model's wording, to validate again without it
                drop["instruction"] = cand.made.task.instruction
            drops.append({**drop_entry(cand.id, result), **drop})
        # saved after every verdict: an interrupted run keeps what it validated
        payload = _save(out, layout, seeds, remade, tasks, drops, started, len(todo))
    return payload


def _seed_order(tid: str) -> tuple[int, str]:
    seed, _, variant = tid.rpartition("/")[2].partition("-")
    return int(seed), variant


def _read(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text())) if path.exists() else {}


def _save(
    out: Path,
    layout: Layout,
    seeds: int,
    remade: set[str],
    tasks: list[dict[str, Any]],
    drops: list[dict[str, Any]],
    started: float,
    played: int,
) -> dict[str, Any]:
    """The remade apps' entries merged into the file as it is now, under a lock: makers of
    other apps may have written it meanwhile, and their entries stay."""
    import fcntl
    import tempfile

    lock = Path(tempfile.gettempdir()) / f"palaestra-{out.name}.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        now = _read(out)
        every = [t for t in now.get("tasks", []) if t["metadata"]["app"] not in remade]
        every = sorted([*every, *tasks], key=lambda t: str(t["id"]))
        dropped = [d for d in now.get("drops", []) if d.get("app") not in remade]
        dropped = sorted([*dropped, *drops], key=lambda d: str(d["task"]))
        payload = {
            "suite": layout.suite,
            "seeds": seeds,
            "report": summary(every, dropped, time.perf_counter() - started, played),
            "tasks": every,
            "drops": dropped,
        }
        scratch = out.with_name(out.name + ".part")
        scratch.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
        scratch.replace(out)  # never a half-written file
    return payload


def _validate(
    todo: list[tuple[Candidate, str]],
    layout: Layout,
    parallel: int,
    notify: Callable[[int, int, str], None],
) -> Iterator[tuple[Candidate, str, Any]]:
    """Each candidate validated on its own env of the family (``parallel`` at once)."""
    if not todo:
        return
    envs = EnvPool(layout.family)
    lock = threading.Lock()

    def check(item: tuple[Candidate, str]) -> tuple[Candidate, str, Any]:
        cand, key = item
        assert cand.made is not None
        report = validate_task(cand.made.task, env=envs.get(), mutations=cand.made.mutations)
        return cand, key, report

    pool = ThreadPoolExecutor(max(1, parallel), thread_name_prefix="validate")
    try:
        futures = [pool.submit(check, item) for item in todo]
        for done, future in enumerate(as_completed(futures), 1):
            cand, key, report = future.result()
            with lock:
                notify(done, len(todo), cand.id)
            yield cand, key, report
    finally:
        pool.shutdown(cancel_futures=True)  # Ctrl-C: the tasks in flight end, no new ones
        envs.close()


def summary(
    tasks: list[dict[str, Any]], drops: list[dict[str, Any]], seconds: float, played: int
) -> dict[str, Any]:
    """The file's totals: validated and dropped (by app and by reason), and the speed of
    validation over every entry's recorded time (so it stands for the whole record, not only
    the last incremental run)."""
    by_app: dict[str, dict[str, int]] = {}
    for t in tasks:
        by_app.setdefault(t["metadata"]["app"], {"validated": 0, "dropped": 0})["validated"] += 1
    for d in drops:
        by_app.setdefault(str(d.get("app")), {"validated": 0, "dropped": 0})["dropped"] += 1
    spent = sum(float(t["validation"].get("seconds", 0.0)) for t in tasks)
    spent += sum(float(d.get("seconds", 0.0)) for d in drops)
    return {
        "validated": len(tasks),
        "reworded": sum(str(t["id"]).endswith(LLM) for t in tasks),
        "dropped": len(drops),
        "templates": len({t["metadata"]["aw_template"] for t in tasks}),
        "by_app": dict(sorted(by_app.items())),
        "validation_seconds": round(spent, 1),
        "validated_per_minute": round(60 * len(tasks) / spent, 2) if spent else 0.0,
        "last_run": {"validated_or_dropped": played, "seconds": round(seconds, 1)},
    }


# ----- coverage ------------------------------------------------------------------------------

#: AndroidWorld's 116 templates by its module (names only), what coverage is measured against
TEMPLATES_FILE = Path(__file__).with_name("androidworld_templates.yaml")

#: why a template has no replica: hardware or content a synthesized app cannot stand for
NOT_COVERED = {
    "AudioRecorderRecordAudio": "records from the microphone; the phone has no audio hardware",
    "AudioRecorderRecordAudioWithFileName": "records from the microphone (as above)",
    "BrowserDraw": "draws on a canvas in a web page the browser app opens; not an app's data",
    "BrowserMaze": "a maze game in a web page the browser app opens; not an app's data",
    "BrowserMultiply": "a quiz in a web page the browser app opens; not an app's data",
    "CameraTakePhoto": "takes a photo with the camera; the phone has no camera",
    "CameraTakeVideo": "records a video with the camera; the phone has no camera",
    "SimpleDrawProCreateDrawing": "free-hand drawing checked from the saved image's pixels",
    "SaveCopyOfReceiptTaskEval": "copies an image in the gallery; checked on the image file",
    "SystemCopyToClipboard": "checks the system clipboard, which the phone does not model",
    "SimpleSmsSendClipboardContent": "pastes the system clipboard, which the phone does not model",
    "ContactsNewContactDraft": "checks a form left unsaved on the screen (the draft is never "
    "stored), while replica verifiers read the apps' databases",
    "RetroPlaylistDuration": "any set of songs lasting 45-50 minutes passes; a verifier derived "
    "from one simulated end state accepts one set",
    "RetroSavePlaylist": "needs two operations in one task (make the playlist, then export it)",
    "OsmAndTrack": "draws a route through waypoints on the map and saves it as a GPX track; no "
    "replica operation makes a track from a sequence of places",
    "OpenAppTaskEval": "checks which app is in front at the end, not an app's data",
    "ExpenseAddMultipleFromGallery": "reads the expenses off a receipt image in the gallery "
    "(text in pixels); no replica holds images",
    "RecipeAddMultipleRecipesFromImage": "reads the recipes off an image in the gallery (text in "
    "pixels); no replica holds images",
    "MarkorTranscribeReceipt": "transcribes a receipt image into a note (text in pixels)",
    "MarkorTranscribeVideo": "transcribes what a video in VLC shows into a note (video content)",
    "MarkorCreateNoteFromClipboard": "pastes the system clipboard, which the phone does not model",
    "MarkorCreateNoteAndSms": "needs two operations in one task (write the note, then send its "
    "text by SMS)",
}


def aw_templates() -> dict[str, list[str]]:
    """AndroidWorld's templates by module."""
    import yaml

    return dict(yaml.safe_load(TEMPLATES_FILE.read_text()))


def coverage(specs: Mapping[str, AppSpec] | None = None) -> list[dict[str, Any]]:
    """Every AndroidWorld template: the replica app covering it (its real name and spec),
    whether it has an ask-the-user variant and a web layout, or the reason it is not covered."""
    specs = {n: load_spec(n) for n in replica_names()} if specs is None else specs
    covered = {str(t.name): (spec, t) for spec in specs.values() for t in spec.tasks if t.name}
    rows = []
    for module, names in aw_templates().items():
        for name in names:
            row = {"module": module, "template": name, "app": "", "spec": "", "ask": False}
            if name not in covered:
                rows.append({**row, "web": False, "reason": NOT_COVERED.get(name, "")})
                continue
            spec, template = covered[name]
            real = spec.replica_of.app if spec.replica_of else spec.title
            row.update(app=real, spec=spec.name, ask=bool(template.ask), reason="")
            rows.append({**row, "web": bool(spec.web and on_the_web(spec, template))})
    return rows


def coverage_markdown(specs: Mapping[str, AppSpec] | None = None) -> str:
    """The coverage table docs/androidworld.md shows (a test checks it is today's)."""
    rows = coverage(specs)
    done = [r for r in rows if r["spec"]]
    lines = [
        f"{len(done)} of {len(rows)} templates covered, {sum(r['ask'] for r in done)} with an "
        f"ask-the-user variant, {sum(r['web'] for r in done)} also in the web layout.",
        "",
        "| AndroidWorld module | template | replica app (spec) | ask variant | web | "
        "not covered because |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        app = f"{r['app']} (`{r['spec']}`)" if r["spec"] else ""
        ask = "yes" if r["ask"] else ""
        web = "yes" if r["web"] else ""
        lines.append(f"| {r['module']} | {r['template']} | {app} | {ask} | {web} | {r['reason']} |")
    return "\n".join(lines) + "\n"


def check(layout: Layout = PHONE, sample: int = 6) -> list[str]:
    """A sample of the committed suite (``sample`` tasks spread evenly over it) validated again
    with today's code, what CI's ``make revalidate`` runs: where a shipped task no longer
    validates. A task failing once is looked at a second time (a browser hiccup passes then, a
    moved verdict fails twice)."""
    from palaestra.envs.mobile.suites import load_replicas
    from palaestra.validation import revalidate_committed

    shipped = load_replicas(layout.file, layout.suite).tasks
    if not shipped:  # never made, or every key went stale: nothing ships, which is no pass
        return [f"no validated task in {layout.file.name}: python -m {__name__}"]
    if 0 < sample < len(shipped):
        shipped = [shipped[i * len(shipped) // sample] for i in range(sample)]
    problems = revalidate_committed(shipped)
    if problems:
        again = {p.split(":", 1)[0] for p in problems}
        problems = revalidate_committed([t for t in shipped if t.id in again])
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m palaestra.synthesis.androidworld", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--apps", default="", help="comma-separated replica apps (default all)")
    parser.add_argument("--seeds", type=int, default=SEEDS, help="seeds per template")
    parser.add_argument("--parallel", type=int, default=1, help="tasks validated at once")
    parser.add_argument("--web", action="store_true", help="the web-layout suite")
    parser.add_argument(
        "--retry-drops",
        action="store_true",
        help="validate the dropped tasks again (a flaky oracle under load), keeping the rest",
    )
    parser.add_argument(
        "--llm-url",
        help="an OpenAI-compatible endpoint: each seed's task also gets a reworded, validated "
        "twin (<Template>/<seed>-llm)",
    )
    parser.add_argument(
        "--llm-key", default=os.environ.get("PALAESTRA_LLM_KEY"), help="API key for --llm-url"
    )
    parser.add_argument("--llm-model", default="gpt-4o-mini", help="model name for --llm-url")
    parser.add_argument(
        "--coverage", action="store_true", help="print the coverage table (markdown) and stop"
    )
    parser.add_argument(
        "--check",
        type=int,
        metavar="N",
        help="re-validate N committed tasks (spread over the suite) with today's code and fail "
        "if one no longer validates (make revalidate); nothing is written",
    )
    args = parser.parse_args(argv)
    if args.coverage:
        print(coverage_markdown(), end="")
        return 0
    if args.check is not None:
        layout = WEB if args.web else PHONE
        problems = check(layout, args.check)
        for problem in problems:
            print(f"{layout.suite}: {problem}")
        print(f"{layout.suite}: " + ("the record stands" if not problems else "re-make it"))
        return 1 if problems else 0
    layout = WEB if args.web else PHONE
    apps = [a.strip() for a in args.apps.split(",") if a.strip()] or None
    from palaestra.synth_apps.llm import LLMAuthor, LLMError

    author = None
    if args.llm_url:
        author = LLMAuthor(args.llm_url, args.llm_key, args.llm_model)
    try:
        made = _make(args, layout, apps, author)
    except LLMError as exc:  # before any task is played: nothing recorded is lost
        raise SystemExit(f"{exc}; nothing was changed") from None
    report = made["report"]
    print(
        f"{layout.suite}: {report['validated']} validated ({report['reworded']} LLM-worded), "
        f"{report['dropped']} dropped ({report['templates']} templates) -> {layout.file}"
    )
    return 0


def _make(
    args: argparse.Namespace, layout: Layout, apps: list[str] | None, author: Rewording | None
) -> dict[str, Any]:
    """``build`` under a progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("validating"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[at]}")
    ) as bar:
        row = bar.add_task("validate", total=None, at="")
        made = build(
            apps,
            seeds=args.seeds,
            parallel=args.parallel,
            layout=layout,
            retry_drops=args.retry_drops,
            author=author,
            on_progress=lambda done, total, tid: bar.update(
                row, completed=done, total=total, at=tid
            ),
        )
    return made


if __name__ == "__main__":
    raise SystemExit(main())
