"""``make demo``: a gateway with worker processes, a few scored episodes through the client,
then the platform-overhead benchmark.

Until a product family lands, the episodes run on the benchmark fixture's counting suite: a
scripted agent that reads the goal, and a random agent, so both a success and a failure are
scored by the verifier on the worker.
"""

from __future__ import annotations

import re
import tempfile

from rich.console import Console
from rich.table import Table

from palaestra.client import Client, RemoteEnv
from palaestra.server.runner import gateway_process

console = Console()


def scripted_policy(obs: dict) -> str:
    """Reads the target from the goal text, as an agent would; never sees the oracle."""
    target = int(re.search(r"show (-?\d+)", obs["goal"]).group(1))  # type: ignore[union-attr]
    gap = target - int(obs["count"])
    return "done()" if gap == 0 else f"add({max(-10, min(10, gap))})"


def run_episodes(url: str) -> Table:
    table = Table(title="episodes through the gateway (scored by the task verifier)")
    for col in ("task", "agent", "steps", "reward", "success"):
        table.add_column(col)
    client = Client(url)
    for task in client.tasks("palaestra-bench"):
        ref = f"palaestra-bench/{task['id']}"
        for agent in ("scripted", "random"):
            env = RemoteEnv(task=ref, base_url=url, transport="ws")
            obs, _ = env.reset(seed=7)
            env.action_space.seed(7)
            steps, reward, info, done = 0, 0.0, {}, False
            while not done:
                action = scripted_policy(obs) if agent == "scripted" else env.action_space.sample()
                obs, reward, terminated, truncated, info = env.step(action)
                steps += 1
                done = terminated or truncated
            verdict = info.get("verifier", {})
            mark = "[green]yes[/]" if verdict.get("success") else "[red]no[/]"
            table.add_row(ref, agent, str(steps), f"{reward:.2f}", mark)
            env.close()
    client.close()
    return table


def main() -> None:
    args = ("--workers", "2", "--log-level", "warning")
    with tempfile.TemporaryDirectory() as runs, gateway_process(*args, "--runs-dir", runs) as gw:
        url = gw[0]
        console.print(f"[bold]gateway[/] {url}  (dashboard at {url}/)")
        console.print(run_episodes(url))
        n = sum(len(r["sessions"]) for r in Client(url).runs())
        console.print(f"{n} trajectories recorded under {runs} (format palaestra.trajectory/1)")
    from palaestra.bench.http import main as bench

    bench(steps=2000, rounds=4)


if __name__ == "__main__":
    main()
