"""Runtimes shared by several families (the browser, the simulated user answering ``ask_user``).

They sit below the families and above the verifiers: a family imports what it shares with
another family from here, never from that family, so families stay independent.
"""
