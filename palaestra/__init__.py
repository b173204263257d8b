"""palaestra: an open agent environment gym.

``palaestra.envs``, ``palaestra.verifiers``, ``palaestra.synth_apps``, ``palaestra.server`` and
``palaestra.bench`` live in the repository's top-level folders of the same names.
"""

from palaestra.gymnasium_ids import register_gymnasium
from palaestra.registry import EnvSpec, make, register, spec, specs

__version__ = "0.1.0"

register_gymnasium()

__all__ = ["EnvSpec", "__version__", "make", "register", "spec", "specs"]
