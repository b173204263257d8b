"""Maps the product card's top-level folders to ``palaestra.*`` (pyproject cannot compute this)."""

from setuptools import find_packages, setup

ROOTS = {
    "palaestra": "palaestra",
    "palaestra.envs": "envs",
    "palaestra.verifiers": "verifiers",
    "palaestra.synth_apps": "synth_apps",
    "palaestra.server": "server",
    "palaestra.bench": "bench",
}

packages = []
for name, folder in ROOTS.items():
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=ROOTS)
