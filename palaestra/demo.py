"""``make demo``: pools of web sessions on MiniWoB tasks through the gateway, scored.

A gateway with two worker processes hosts one pool (a ``RemoteVectorEnv``) per task. The oracle
agent (scripted reference solutions that read only the goal and the accessibility tree) and a
random agent (clicks a random element, sometimes types) play the same seeds; the verifier on
the worker scores every episode. Trajectories, screenshots included, are recorded under
``runs/demo`` and a contact sheet of final screens is saved as ``runs/demo/final-screens.png``.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from palaestra.client import Client, RemoteVectorEnv
from palaestra.envs.web.oracles import ORACLES, oracle_action
from palaestra.server.runner import gateway_process

console = Console()
RUNS = Path("runs/demo")
POOL = 4
MAX_STEPS = 15
#: a spread of MiniWoB's classic tasks (every oracle is exercised by the tests)
TASKS = (
    "click-button", "click-link", "click-checkboxes", "click-dialog", "click-tab",
    "enter-text", "enter-password", "login-user", "focus-text", "choose-list",
    "use-spinner", "simple-arithmetic",
)  # fmt: skip


def random_action(obs: dict, rng: random.Random) -> str:
    """Clicks a random element of the tree; one time in five types a random word."""
    bids = re.findall(
        r"\[(\w+)\] (?:button|link|textbox|checkbox|radio|generic|option)", obs["axtree"]
    )
    if not bids:
        return "noop(0)"
    bid = rng.choice(bids)
    if rng.random() < 0.2:
        return f"fill('{bid}', '{rng.choice(['yes', 'hello', '42', 'submit'])}')"
    return f"click('{bid}')"


def member(batch: dict, i: int) -> dict:
    return {k: v[i] for k, v in batch.items()}


def play(envs: RemoteVectorEnv, task: str, agent: str, seed: int) -> tuple[list[float], list]:
    """One episode per pool member (seeds seed..seed+N-1); returns rewards and final screens."""
    rng = random.Random(seed)
    obs, _ = envs.reset(seed=seed)
    rewards: list[float | None] = [None] * envs.num_envs
    screens: list = [None] * envs.num_envs
    for _ in range(MAX_STEPS):
        actions = []
        for i in range(envs.num_envs):
            o = member(obs, i)
            if rewards[i] is not None:
                actions.append("noop(0)")  # finished members idle (their next step autoresets)
            elif agent == "oracle":
                actions.append(oracle_action(task, o))
            else:
                actions.append(random_action(o, rng))
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


def main() -> None:
    shutil.rmtree(RUNS, ignore_errors=True)
    RUNS.mkdir(parents=True)
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
        recorded = sum(len(r["sessions"]) for r in Client(url).runs())
    n = len(tasks) * POOL
    table.add_row("all", f"{totals['oracle'] / n:.0%}", f"{totals['random'] / n:.0%}")
    console.print(table)
    contact_sheet(screens, RUNS / "final-screens.png")
    console.print(
        f"{recorded} trajectories with screenshots in {RUNS}/live/ "
        f"(format palaestra.trajectory/1); final screens: {RUNS}/final-screens.png"
    )


if __name__ == "__main__":
    main()
