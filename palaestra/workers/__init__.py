"""Workers host env instances outside the gateway's event loop.

``host`` is the worker process itself; ``base`` is the gateway's handle on one worker and the
backend interface; ``local`` runs workers as subprocesses. A Docker container or a Ray actor
becomes a worker by providing the same :class:`~palaestra.workers.base.Worker` interface.
"""
