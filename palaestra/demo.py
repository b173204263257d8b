"""``make demo``: MiniWoB pools and freshly synthesized apps, through the gateway, scored.

A gateway with two worker processes hosts one pool (a ``RemoteVectorEnv``) per MiniWoB task.
The oracle agent (scripted reference solutions that read only the goal and the accessibility
tree) and a random agent (clicks a random element, sometimes types) play the same seeds; the
verifier on the worker scores every episode. Then a synthesis job on the same gateway builds a
validated suite over the five built-in app domains (desktop and mobile layouts), and the
planned oracle and the random agent play every task of it. Then the other families: on each
usersim domain and tau2-bench suite the reference assistant against one that leaves at once, and one
CAD part per family built by its semantic oracle against an empty submission (renders of the
built parts in ``runs/demo/cad-parts.png``). Trajectories, screenshots included,
are recorded under ``runs/demo``; contact sheets are saved as ``runs/demo/final-screens.png``
(MiniWoB) and ``runs/demo/synth-apps.png`` (the synthesized apps).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from palaestra import tasks as suites
from palaestra.client import Client, RemoteEnv, RemoteVectorEnv
from palaestra.envs.web.policies import ORACLES
from palaestra.family import family as get_family
from palaestra.policies import ConstantPolicy, Policy, ReplayPolicy, run_episode
from palaestra.server.runner import gateway_process

console = Console()
RUNS = Path("runs/demo")
POOL = 4
MAX_STEPS = 15
RANDOM_STEPS = 12
#: a spread of MiniWoB's classic tasks (every oracle is exercised by the tests)
TASKS = (
    "click-button", "click-link", "click-checkboxes", "click-dialog", "click-tab",
    "enter-text", "enter-password", "login-user", "focus-text", "choose-list",
    "use-spinner", "simple-arithmetic",
)  # fmt: skip


def member(batch: dict, i: int) -> dict:
    return {k: v[i] for k, v in batch.items()}


def play(envs: RemoteVectorEnv, task: str, agent: str, seed: int) -> tuple[list[float], list]:
    """One episode per pool member (seeds seed..seed+N-1); returns rewards and final screens.

    The web family's ``oracle`` (the task's MiniWoB oracle) or ``random`` policy acts for every
    member: both read only the member's observation, so one instance serves the whole pool."""
    policy = get_family("web").policy(agent, **({"seed": seed} if agent == "random" else {}))
    policy.reset(suites.get_task(f"miniwob/{task}"))
    obs, _ = envs.reset(seed=seed)
    rewards: list[float | None] = [None] * envs.num_envs
    screens: list = [None] * envs.num_envs
    for _ in range(MAX_STEPS):
        actions = []
        for i in range(envs.num_envs):
            o = member(obs, i)
            if rewards[i] is not None:
                actions.append("noop(0)")  # finished members idle (their next step autoresets)
            else:
                actions.append(policy.act(o, {}))
        before = obs["screenshot"]  # MiniWoB covers the task once it is over: keep the last look
        obs, reward, terminated, truncated, _ = envs.step(actions)
        for i in range(envs.num_envs):
            if rewards[i] is None and (terminated[i] or truncated[i]):
                rewards[i] = float(reward[i])
                screens[i] = before[i]
        if all(r is not None for r in rewards):
            break
    return [r or 0.0 for r in rewards], screens


def contact_sheet(screens: dict[str, np.ndarray], path: Path) -> None:
    """The oracle's last view of each task (MiniWoB's task area), labelled."""
    cols, w, h = 6, 170, 240
    rows = (len(screens) + cols - 1) // cols
    sheet = Image.new("RGB", (cols * w, rows * h), "white")
    draw = ImageDraw.Draw(sheet)
    for i, (task, img) in enumerate(screens.items()):
        x, y = (i % cols) * w, (i // cols) * h
        sheet.paste(Image.fromarray(np.asarray(img)[:210, :160]), (x + 5, y + 22))
        draw.text((x + 5, y + 5), task, fill="black")
    sheet.save(path)


def play_synth(url: str, progress: Progress) -> None:
    """Synthesize a suite over every domain through the gateway, then play it."""
    job = progress.add_task("synthesize (generate, then validate on Chromium)", total=None)

    def show(p: dict | None) -> None:
        if p and p.get("total"):
            progress.update(job, completed=p["done"], total=p["total"])

    with Client(url) as client:
        made = client.synth(
            ["all"],
            variants=2,
            tasks=20,
            layouts=["desktop", "mobile"],
            name="demo",
            on_progress=show,
        )
    progress.update(job, completed=1, total=1)  # enough tasks validated: the rest is skipped
    if made["status"] != "succeeded":
        console.print(f"[red]synthesis failed:[/] {made['error']}")
        return
    report = made["report"]
    suite = suites.get_suite("demo")
    play_job = progress.add_task(
        "synthesized tasks: oracle and random agent", total=len(suite.tasks)
    )
    clicker = get_family("web").policy("random", seed=0)
    clicker.reset(None)  # one random stream over the whole suite
    results: dict[str, dict[str, list[float]]] = {}
    shots: dict[str, np.ndarray] = {}
    for task in suite.tasks:
        app = f"{task.metadata['app']} ({task.setup['layout']})"
        row = results.setdefault(app, {"oracle": [], "random": []})
        env = RemoteEnv(task=f"demo/{task.id}", base_url=url, transport="ws")
        oracle = Peek(get_family(task.family).policy("oracle"), at=2)
        # the oracle, then a random agent with a budget of clicks that then says it is done
        for agent, policy in (("oracle", oracle), ("random", Budget(clicker, RANDOM_STEPS))):
            episode = run_episode(env, policy, task, seed=0, reset_options={}, finish="done()")
            row[agent].append(episode.reward)
        if oracle.seen is not None and app not in shots:
            shots[app] = oracle.seen["screenshot"]
        env.close()
        progress.advance(play_job)
    table = Table(
        title=f"Synthesized suite 'demo': {report['validated']} validated tasks "
        f"({report['tasks_per_minute']:.0f} per minute)"
    )
    for col in ("app (layout)", "tasks", "oracle score", "random score"):
        table.add_column(col)
    for app, row in sorted(results.items()):
        table.add_row(
            app,
            str(len(row["oracle"])),
            f"{np.mean(row['oracle']):.2f}",
            f"{np.mean(row['random']):.2f}",
        )
    console.print(table)
    app_sheet(shots, RUNS / "synth-apps.png")


class Peek:
    """``inner``, keeping the observation it acts on at step ``at`` (a picture for the sheet)."""

    def __init__(self, inner: Policy, at: int) -> None:
        self.inner, self.at = inner, at
        self.seen: dict[str, Any] | None = None
        self.steps = 0

    def reset(self, task: suites.Task | None) -> None:
        self.steps = 0
        self.inner.reset(task)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if self.steps == self.at:
            self.seen = observation
        self.steps += 1
        return self.inner.act(observation, info)


class Budget:
    """``inner`` for ``steps`` actions, then stops; never reset, so one random stream runs over
    the whole suite."""

    def __init__(self, inner: Policy, steps: int) -> None:
        self.inner, self.steps, self.left = inner, steps, steps

    def reset(self, task: suites.Task | None) -> None:
        self.left = self.steps

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if self.left <= 0:
            raise StopIteration("the budget is spent")
        self.left -= 1
        return self.inner.act(observation, info)


def play_usersim(url: str, progress: Progress, per_domain: int = 5) -> None:
    """Dialogues: on each usersim domain and each tau2-bench suite, the reference assistant (the
    competent scripted one; tau2's gold assistant) vs an assistant that leaves at once."""
    groups: dict[str, tuple[str, list]] = {}
    for task in suites.get_suite("usersim").tasks:
        groups.setdefault(task.setup["domain"], ("usersim", []))[1].append(task)
    for name in ("tau2-retail", "tau2-telecom"):
        groups[name] = (name, suites.get_suite(name).tasks)
    job = progress.add_task("usersim dialogues", total=per_domain * len(groups))
    table = Table(title="The dialogue families (usersim, tau2) through the gateway (WebSocket)")
    for col in ("domain", "tasks", "reference assistant", "leaves at once", "turns (reference)"):
        table.add_column(col)
    for domain, (suite, tasks) in groups.items():
        tau2 = suite.startswith("tau2")
        kinds = {
            "reference": "tau2_gold" if tau2 else "competent",
            "leaves": "noop" if tau2 else "early",
        }
        scores: dict[str, list[float]] = {k: [] for k in kinds}
        turns = []
        for task in tasks[:per_domain]:
            env = RemoteEnv(task=f"{suite}/{task.id}", base_url=url, transport="ws")
            for kind, policy in kinds.items():
                # the session is on the task already: reset it with no options
                family = get_family(task.family)
                episode = run_episode(env, family.policy(policy), task, seed=0, reset_options={})
                scores[kind].append(episode.reward)
                if kind == "reference":
                    turns.append(episode.steps)
            env.close()
            progress.advance(job)
        table.add_row(
            domain,
            str(len(turns)),
            f"{np.mean(scores['reference']):.2f}",
            f"{np.mean(scores['leaves']):.2f}",
            f"{np.mean(turns):.1f}",
        )
    console.print(table)


def play_cad(url: str, progress: Progress) -> None:
    """One part per CAD family: the semantic oracle vs submitting an empty model."""
    tasks: dict[str, suites.Task] = {}
    for task in suites.get_suite("cad-parts").tasks:
        tasks.setdefault(task.metadata["part_family"], task)
    job = progress.add_task("CAD parts", total=len(tasks))
    table = Table(title="CAD family through the gateway: one part per family")
    for col in ("family", "oracle steps", "oracle score (IoU)", "empty model"):
        table.add_column(col)
    shots: dict[str, np.ndarray] = {}
    for family, task in tasks.items():
        env = RemoteEnv(task=f"cad-parts/{task.id}", base_url=url, transport="ws")
        # the oracle's steps, ending with submit() (played when its steps end without it)
        oracle = run_episode(env, ReplayPolicy(), task, seed=0, reset_options={}, finish="submit()")
        assert oracle.terminated, f"{task.id}: the oracle did not end the episode"
        shots[family] = oracle.observation["views"]
        nothing = ConstantPolicy("submit()")
        empty = run_episode(env, nothing, task, seed=0, reset_options={}, max_steps=1)
        env.close()
        steps = len(task.oracle.data or []) if task.oracle else 0
        table.add_row(family, str(steps), f"{oracle.reward:.3f}", f"{empty.reward:.3f}")
        progress.advance(job)
    console.print(table)
    app_sheet(shots, RUNS / "cad-parts.png")


def app_sheet(shots: dict[str, np.ndarray], path: Path) -> None:
    """The synthesized apps as the agent sees them, scaled to one height, labelled."""
    height = 360
    tiles = []
    for label, img in sorted(shots.items()):
        im = Image.fromarray(np.asarray(img))
        im = im.resize((max(1, im.width * height // im.height), height))
        tiles.append((label, im))
    if not tiles:
        return
    sheet = Image.new("RGB", (sum(t.width + 10 for _, t in tiles), height + 24), "white")
    draw, x = ImageDraw.Draw(sheet), 0
    for label, im in tiles:
        sheet.paste(im, (x, 22))
        draw.text((x + 4, 4), label, fill="black")
        x += im.width + 10
    sheet.save(path)


def main() -> None:
    shutil.rmtree(RUNS, ignore_errors=True)
    RUNS.mkdir(parents=True)
    # the synthesized suite lives with the demo's runs; this process reads its oracles there
    os.environ["PALAESTRA_SUITES_DIR"] = str((RUNS / "suites").resolve())
    suites.add_suite_path(RUNS / "suites")
    tasks = [t for t in TASKS if t in ORACLES]
    table = Table(title=f"MiniWoB through the gateway: {POOL} episodes per agent and task")
    for col in ("task", "oracle success", "random success"):
        table.add_column(col)
    screens: dict[str, np.ndarray] = {}
    totals = {"oracle": 0.0, "random": 0.0}
    args = ("--workers", "2", "--runs-dir", str(RUNS), "--log-level", "warning")
    with gateway_process(*args) as (url, _), Progress(console=console) as progress:
        job = progress.add_task("pools", total=len(tasks))
        for task in tasks:
            envs = RemoteVectorEnv(num_envs=POOL, task=f"miniwob/{task}", base_url=url)
            row = [task]
            for agent in ("oracle", "random"):
                rewards, finals = play(envs, task, agent, seed=100)
                wins = sum(r > 0 for r in rewards)
                totals[agent] += wins
                row.append(f"{'[green]' if wins == POOL else ''}{wins}/{POOL}")
                if agent == "oracle" and finals[0] is not None:
                    screens[task] = finals[0]
            envs.close()
            table.add_row(*row)
            progress.advance(job)
        console.print(table)
        play_synth(url, progress)
        play_usersim(url, progress)
        play_cad(url, progress)
        recorded = sum(len(r["sessions"]) for r in Client(url).runs())
    n = len(tasks) * POOL
    console.print(
        f"MiniWoB overall: oracle {totals['oracle'] / n:.0%}, random {totals['random'] / n:.0%}"
    )
    contact_sheet(screens, RUNS / "final-screens.png")
    console.print(
        f"{recorded} trajectories with screenshots in {RUNS}/live/ "
        f"(format palaestra.trajectory/1); final screens: {RUNS}/final-screens.png, "
        f"synthesized apps: {RUNS}/synth-apps.png, CAD parts: {RUNS}/cad-parts.png"
    )


if __name__ == "__main__":
    main()
