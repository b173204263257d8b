"""The dialogue runtime: what every tool-using dialogue family (``usersim``, ``tau2``) shares.

- :mod:`.env`: :class:`~.env.DialogueEnv`, the assistant's moves (a message, a tool call, the
  end) in OpenAI/tau2 forms, the observation, and the evidence a verifier reads;
- :mod:`.adversaries`: the one set of cheap strategies validation plays on every dialogue task,
  each family supplying the building blocks (what to look up, what to write);
- :mod:`.search`: the adversary-search space, built only from what an assistant sees;
- :mod:`.validation`: how a dialogue family's tasks are validated (the plan both extend);
- :mod:`.tasks`: what every dialogue task says alike (the brief, the public domain);
- :mod:`.phrasing`: the phrase banks and value formats reworded assistants draw from.

A family brings its world (tools, user, gold); this package never imports a family.
"""
