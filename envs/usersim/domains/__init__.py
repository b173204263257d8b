"""The built-in domains, one module each."""
