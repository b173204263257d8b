"""Office work on the desktop: LibreOffice Calc, Writer and Impress documents generated from
our synthesized domains' data, task templates over them, and the ``office`` suites.

The verifiers read the saved file (:mod:`palaestra.verifiers.office`), never the screen.
"""
