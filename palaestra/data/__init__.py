"""Recorded runs as data: re-grade them with today's verifiers, replay them, export them.

Works on the files the recorder writes (:mod:`palaestra.recording`), so it runs offline, next
to a gateway or without one: :mod:`.episodes` reads a run into episodes (skipping and reporting
corrupt lines, telling a run still being written), :mod:`.regrade` re-scores end-state
snapshots, :mod:`.replay` re-executes recorded actions on a fresh session, :mod:`.export`
writes Hugging Face datasets, Parquet and chat JSONL. See docs/data.md.
"""
