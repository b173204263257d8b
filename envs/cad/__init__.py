"""The CAD family: ``palaestra/cad-v0``, parametric part modeling on OpenCascade (build123d)."""

from __future__ import annotations

from palaestra.family import Family, SuiteSpec
from palaestra.registry import EnvSpec

FAMILY = Family(
    name="cad",
    envs=(
        EnvSpec(
            "palaestra/cad-v0",
            "palaestra.envs.cad.env:CadEnv",
            family="cad",
            description="Build a part step by step with semantic CAD actions on a real B-rep "
            "kernel (OpenCascade via build123d); scored by volumetric IoU and dimensions.",
        ),
    ),
    suites=(
        SuiteSpec(
            "cad-parts",
            "palaestra.envs.cad.suites:load_suite",
            "Eight parametric part families (plate, L-bracket, flange, shaft, enclosure, gear "
            "blank, standoff, hinge leaf), 20 seeded tasks each, execution-validated.",
        ),
    ),
    package="palaestra.envs.cad",
    requires=("build123d",),
    extra="cad",
    options="palaestra.envs.cad.options:CadOptions",
    description="Parametric part modeling on OpenCascade (build123d).",
)
