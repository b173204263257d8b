"""The gateway's routers, one per resource (DESIGN.md section 4), in the order they are mounted."""

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
