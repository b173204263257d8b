"""The gateway's routers, one per resource, in the order they are mounted (docs/api.md lists
every route)."""

from palaestra.server.routes import (
    dashboard,
    envs,
    evals,
    health,
    pools,
    runs,
    sessions,
    suites,
    synth,
)

ROUTERS = (
    health.router,
    envs.router,
    suites.router,
    sessions.router,
    pools.router,
    synth.router,
    evals.router,
    runs.router,
    dashboard.router,
)

__all__ = ["ROUTERS"]
