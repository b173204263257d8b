"""palaestra: an open agent environment gym.

``palaestra.envs``, ``palaestra.verifiers``, ``palaestra.synth_apps``, ``palaestra.server`` and
``palaestra.bench`` live in the repository's top-level folders of the same names.
"""

from palaestra.registry import EnvSpec, make, register, register_gymnasium, spec, specs

__version__ = "0.1.0"

register_gymnasium()

__all__ = ["EnvSpec", "__version__", "make", "register", "spec", "specs"]
