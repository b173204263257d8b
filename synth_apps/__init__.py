"""App synthesis: app specs, renderer, task generator and validation pipeline (to come)."""
