"""Env families. Each sub-package registers its specs through the ``palaestra.envs`` group."""
