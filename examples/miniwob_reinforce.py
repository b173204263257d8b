"""Online RL from scratch on MiniWoB click tasks: REINFORCE with a baseline, numpy only.

The agent sees what any agent sees (the goal and the accessibility tree of the page) and picks
one element to click. Its policy is a softmax over the page's elements of a linear score of a
few features of (goal, element): does the element's name match a quoted phrase of the goal,
occur in it, or equal it; word overlap; the element's role, and whether the goal names that
role. The weights start at zero, where the policy is exactly the uniform random clicker (the
baseline it must beat), and learn with REINFORCE: ``w += lr * (R - b) * (phi(a) - E_pi[phi])``,
``b`` a running mean of the reward per task.

Episodes run through ``RemoteVectorEnv`` pools, one per task, with the session options
``max_steps=1`` (one click, then MiniWoB's verdict is the reward) and ``observe=["axtree",
"goal"]`` (no screenshot to send). Each round resets every member on fresh seeds, clicks,
updates. Held-out seeds (from 10**6 on) measure the greedy policy before and after.

    python examples/miniwob_reinforce.py --minutes 10 --png docs/rl-miniwob-curve.png

starts a gateway on 127.0.0.1 (``--base-url`` to use a running one) and prints the curve.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from palaestra.envs.runtimes.axtree import Node, parse

TASKS = ("click-button", "click-link", "click-tab", "click-dialog")
OPTIONS = {"observe": ["axtree", "goal"], "max_steps": 1}
EVAL_SEED = 10**6
ROLES = ("button", "tab", "generic", "link", "radio", "checkbox", "textbox")
WORD = re.compile(r"[a-z0-9#]+")


# ----- features ------------------------------------------------------------------------------
def elements(axtree: str) -> list[Node]:
    """The clickable candidates: every line of the tree that carries an element id (read by
    the web family's own tree reader, the one its scripted policies use)."""
    return [n for n in parse(axtree) if n.bid and n.role != "RootWebArea"]


def _norm(text: str) -> str:
    return " ".join(WORD.findall(text.lower()))


def features(goal: str, el: Node) -> np.ndarray:
    g, n = _norm(goal), _norm(el.name)
    quoted = {_norm(q) for q in re.findall(r'"([^"]+)"', goal)}
    words_n, words_g = set(n.split()), set(g.split())
    role_words = {r for r in ROLES if r in words_g}
    return np.array(
        [
            float(bool(n) and n in quoted),  # the goal quotes its name
            float(bool(n) and n != g and f" {n} " in f" {g} "),  # its name occurs in the goal
            float(bool(n) and n == g),  # it is the goal's own text
            len(words_n & words_g) / max(1, len(words_n)),  # word overlap
            *(float(el.role == r) for r in ROLES),
            float(el.role in role_words),  # the goal names its role
            float(not n),  # nameless
            float(not re.search(r"[a-z]", n)),  # no letters ('-', '0')
            min(el.depth, 4) / 4,
        ]
    )


DIM = len(features("", Node(0, 0, "1", "generic", "")))


# ----- the policy ----------------------------------------------------------------------------
@dataclass
class Policy:
    w: np.ndarray = field(default_factory=lambda: np.zeros(DIM))

    def probs(self, phi: np.ndarray) -> np.ndarray:
        z = phi @ self.w
        e = np.exp(z - z.max())
        return e / e.sum()

    def act(self, phi: np.ndarray, rng: np.random.Generator, greedy: bool = False) -> int:
        p = self.probs(phi)
        return int(np.argmax(p)) if greedy else int(rng.choice(len(p), p=p))

    def grad(self, phi: np.ndarray, a: int) -> np.ndarray:
        return phi[a] - self.probs(phi) @ phi


def observe(obs: dict[str, Any], i: int) -> tuple[list[Node], np.ndarray]:
    els = elements(str(obs["axtree"][i]))
    goal = str(obs["goal"][i])
    return els, np.stack([features(goal, e) for e in els])


# ----- the loop ------------------------------------------------------------------------------
@contextlib.contextmanager
def gateway(base_url: str | None, workers: int) -> Iterator[str]:
    if base_url:
        yield base_url
        return
    from palaestra.server.runner import gateway_thread
    from palaestra.server.settings import Settings

    with gateway_thread(Settings(workers=workers, record=False)) as url:
        yield url


@dataclass
class Curve:
    episodes: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    success: list[float] = field(default_factory=list)  # of each round's sampled episodes


def play(pools: dict[str, Any], policy: Policy, seed: int, rng: Any, greedy: bool) -> dict:
    """One round: every member of every pool resets on its own seed and clicks once."""
    out: dict[str, list[tuple[np.ndarray, int, float]]] = {}
    for task, pool in pools.items():
        seeds = [seed + i for i in range(pool.num_envs)]
        obs, _ = pool.reset(seed=seeds)
        chosen, actions = [], []
        for i in range(pool.num_envs):
            els, phi = observe(obs, i)
            a = policy.act(phi, rng, greedy)
            chosen.append((phi, a))
            actions.append({"name": "click", "args": {"bid": els[a].bid}})
        _, rewards, _, _, _ = pool.step(actions)
        out[task] = [(phi, a, float(r > 0)) for (phi, a), r in zip(chosen, rewards, strict=True)]
    return out


def evaluate(pools: dict[str, Any], policy: Policy, rounds: int, greedy: bool) -> float:
    rng = np.random.default_rng(0)
    wins = [
        r
        for k in range(rounds)
        for results in play(pools, policy, EVAL_SEED + 1000 * k, rng, greedy).values()
        for _, _, r in results
    ]
    return float(np.mean(wins))


def train(
    base_url: str | None = None,
    tasks: Sequence[str] = TASKS,
    envs_per_task: int = 2,
    minutes: float = 10.0,
    target: float = 0.95,
    lr: float = 2.0,
    eval_rounds: int = 4,
    workers: int = 1,
    seed: int = 0,
    log: bool = True,
) -> dict[str, Any]:
    """Train until the running success rate reaches ``target`` (or time is up), then evaluate
    the random (untrained) and the trained policy on the same held-out seeds."""
    from palaestra.client import RemoteVectorEnv

    rng = np.random.default_rng(seed)
    policy, curve = Policy(), Curve()
    baseline = {t: 0.0 for t in tasks}
    with gateway(base_url, workers) as url, contextlib.ExitStack() as stack:
        pools = {}
        for t in tasks:
            pool = RemoteVectorEnv(
                task=f"miniwob/{t}", num_envs=envs_per_task, base_url=url, options=OPTIONS
            )
            stack.callback(pool.close)
            pools[t] = pool
        random_before = evaluate(pools, Policy(), eval_rounds, greedy=False)
        t0, episodes, k, recent = time.monotonic(), 0, 0, []
        while time.monotonic() - t0 < minutes * 60:
            round_ = play(pools, policy, 1000 * k, rng, greedy=False)
            k += 1
            step, wins = np.zeros(DIM), []
            for task, results in round_.items():
                for phi, a, r in results:
                    step += (r - baseline[task]) * policy.grad(phi, a)
                    baseline[task] += 0.1 * (r - baseline[task])
                    wins.append(r)
            policy.w += lr * step / len(wins)
            episodes += len(wins)
            recent = (recent + wins)[-4 * len(wins) :]
            curve.episodes.append(episodes)
            curve.seconds.append(time.monotonic() - t0)
            curve.success.append(float(np.mean(wins)))
            if log:
                print(f"round {k:4d}  episodes {episodes:5d}  {curve.seconds[-1]:6.1f} s  "
                      f"success {np.mean(wins):.2f}  running {np.mean(recent):.2f}")  # fmt: skip
            if k >= 4 and np.mean(recent) >= target:
                break
        trained = evaluate(pools, policy, eval_rounds, greedy=True)
        n_eval = eval_rounds * envs_per_task * len(tasks)
    return {
        "tasks": list(tasks),
        "random_success": random_before,
        "trained_success": trained,
        "eval_episodes": n_eval,
        "train_episodes": episodes,
        "train_seconds": curve.seconds[-1] if curve.seconds else 0.0,
        "curve": curve,
        "weights": policy.w.tolist(),
    }


# ----- statistics and the plot ---------------------------------------------------------------
def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p): how likely a random clicker does this well."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def plot(result: dict[str, Any], path: str | Path) -> None:
    """The learning curve (success per round, and its running mean) against the random
    baseline, as a PNG drawn with Pillow."""
    from PIL import Image, ImageDraw

    curve: Curve = result["curve"]
    w, h, left, bottom, top, right = 900, 480, 70, 60, 40, 30
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    x_max = max(curve.episodes[-1] if curve.episodes else 1, 1)

    def xy(ep: float, s: float) -> tuple[float, float]:
        return (left + (w - left - right) * ep / x_max, h - bottom - (h - bottom - top) * s)

    d.line([xy(0, 0), xy(x_max, 0)], fill="black")
    d.line([xy(0, 0), xy(0, 1)], fill="black")
    for s in (0.0, 0.25, 0.5, 0.75, 0.9, 1.0):
        d.line([xy(0, s), xy(x_max, s)], fill=(225, 225, 225))
        d.text((8, xy(0, s)[1] - 6), f"{s:.2f}", fill="black")
    for ep in np.linspace(0, x_max, 6):
        d.text((xy(ep, 0)[0] - 10, h - bottom + 8), f"{int(ep)}", fill="black")
    d.text((w // 2 - 60, h - 25), "training episodes", fill="black")
    if curve.success:
        d.line([xy(e, s) for e, s in zip(curve.episodes, curve.success, strict=True)],
               fill=(160, 190, 230), width=1)  # fmt: skip
        run = np.convolve(curve.success, np.ones(4) / 4, mode="full")[: len(curve.success)]
        run[:3] = np.cumsum(curve.success[:3]) / np.arange(1, min(3, len(run)) + 1)
        d.line([xy(e, s) for e, s in zip(curve.episodes, run, strict=True)],
               fill=(20, 80, 200), width=3)  # fmt: skip
    rnd = result["random_success"]
    d.line([xy(0, rnd), xy(x_max, rnd)], fill=(200, 40, 40), width=2)
    d.text((xy(0, rnd)[0] + 8, xy(0, rnd)[1] - 16), f"random clicker {rnd:.2f}", fill=(200, 40, 40))
    title = (
        f"REINFORCE on MiniWoB {', '.join(result['tasks'])}: held-out success "
        f"{rnd:.2f} -> {result['trained_success']:.2f} in {result['train_seconds']:.0f} s"
    )
    d.text((left, 12), title, fill="black")
    legend = "thin: success of each round's sampled clicks; thick: running mean of 4 rounds"
    d.text((left, h - 12), legend, fill=(20, 80, 200))
    img.save(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="a running gateway (default: start one here)")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--envs-per-task", type=int, default=2)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--target", type=float, default=0.95)
    ap.add_argument("--eval-rounds", type=int, default=4)
    ap.add_argument("--png", default="rl-miniwob-curve.png")
    args = ap.parse_args()
    result = train(
        args.base_url,
        args.tasks.split(","),
        args.envs_per_task,
        args.minutes,
        args.target,
        eval_rounds=args.eval_rounds,
    )
    plot(result, args.png)
    n = result["eval_episodes"]
    k = round(result["trained_success"] * n)
    summary = {k_: v for k_, v in result.items() if k_ != "curve"}
    summary["p_value_vs_random"] = binomial_tail(k, n, max(result["random_success"], 1e-3))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
