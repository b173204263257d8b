"""The CAD family: ``palaestra/cad-v0``, parametric part modeling on OpenCascade (build123d)."""

from __future__ import annotations


def register_cad() -> None:
    from palaestra.registry import EnvSpec, register

    register(
        EnvSpec(
            "palaestra/cad-v0",
            "palaestra.envs.cad.env:CadEnv",
            family="cad",
            description="Build a part step by step with semantic CAD actions on a real B-rep "
            "kernel (OpenCascade via build123d); scored by volumetric IoU and dimensions.",
        )
    )
