"""The AndroidWorld replica app specs (``*.yaml`` here), loaded by name through
:func:`palaestra.synth_apps.spec.load_spec`; nothing imports this package.

It is a package, not a plain data folder, on purpose: a validation record's code digest takes in
the data folders beside a family's modules, and these specs are task data. Each replica task's
record key covers the spec files it uses itself (its app and any app it plants rows in), so an
edit to one replica app re-validates that app's tasks only, not every record of the family.
"""
