"""The simulated user, shared by the usersim family and every GUI family's ``ask_user``.

An agenda-driven user over a symbolic goal (:mod:`.user`), the rule-based reader of the
assistant's dialogue acts (:mod:`.acts`), the persona wording (:mod:`.wording`), the slot
vocabulary both read and speak (:mod:`.domain`), and the ``ask_user`` answerer the web and mobile
families use (:mod:`.bridge`). The usersim family's domains (worlds, tools, rules) extend
:class:`.domain.Domain`; nothing here knows a family.
"""
