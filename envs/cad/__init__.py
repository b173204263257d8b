"""The CAD family: ``palaestra/cad-v0``, parametric part modeling on OpenCascade (build123d)."""

from __future__ import annotations


def register_cad() -> None:
    from palaestra.registry import EnvSpec, register
    from palaestra.tasks import register_suite

    register(
        EnvSpec(
            "palaestra/cad-v0",
            "palaestra.envs.cad.env:CadEnv",
            family="cad",
            description="Build a part step by step with semantic CAD actions on a real B-rep "
            "kernel (OpenCascade via build123d); scored by volumetric IoU and dimensions.",
        )
    )
    register_suite(
        "cad-parts",
        "palaestra.envs.cad.suite:load_suite",
        "Eight parametric part families (plate, L-bracket, flange, shaft, enclosure, gear "
        "blank, standoff, hinge leaf), 20 seeded tasks each, execution-validated.",
    )
