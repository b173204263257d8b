"""Synthesis: apps and execution-validated tasks made into suites (``palaestra synth``,
``POST /v1/synth/jobs``, the shipped phone suite).

- :func:`.pipeline.synthesize`: the pipeline, with :class:`.pipeline.Progress` events through
  ``on_progress`` and a :class:`.pipeline.SynthReport`;
- :class:`.process.SynthesisProcess`: the same call in a process of its own, its events over
  a pipe, as the gateway's synthesis jobs run it;
- :mod:`.phone`: the maker of the shipped phone suite (``python -m palaestra.synthesis.phone``).

A service above the families, beside evals and data: it plays the web and mobile families'
envs and policies to validate what it makes. What lies below the families (specs, generation,
the app server, seed data, expressions, variants, templates) is :mod:`palaestra.synth_apps`,
which names no family. This layer imports no server, CLI or demo code.

The package imports nothing at its top: the gateway imports :mod:`.process` without paying for
the pipeline (browsers, the app server), which only its child process loads.
"""
