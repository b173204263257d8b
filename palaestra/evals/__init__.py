"""Evaluations: run an agent over a suite through the gateway and report figures people can
trust and compare (``palaestra eval``, ``POST /v1/evals``).

- :class:`EvalConfig` / :class:`EpisodeResult` / :class:`EvalSummary`: the contract
  (:mod:`.config`);
- :func:`run_eval` / :func:`arun_eval`: the runner (:mod:`.runner`);
- agents: scripted family policies, ``openai:MODEL``, ``module:Class``, HTTP (:mod:`.agents`);
- :mod:`.stats` and :mod:`.report`: Wilson intervals, pass@k / pass^k, tables, the paired
  comparison, ``summary.json``, ``report.md`` and the plot.

This layer sits between the gateway (which runs eval jobs) and the families; it imports no
server, CLI or demo code.
"""

from palaestra.evals.agents import Agent, HttpAgent, ModelUnavailable, agent_names, parse_agent
from palaestra.evals.config import EpisodeResult, EvalConfig, EvalSummary
from palaestra.evals.runner import ProgressEvent, Runner, arun_eval, run_eval
from palaestra.evals.store import read_results

__all__ = [
    "Agent",
    "EpisodeResult",
    "EvalConfig",
    "EvalSummary",
    "HttpAgent",
    "ModelUnavailable",
    "ProgressEvent",
    "Runner",
    "agent_names",
    "arun_eval",
    "parse_agent",
    "read_results",
    "run_eval",
]
