"""Config dataclasses, one per ``params.yaml`` section, unknown keys rejected: ``config.<stage>`` holds the
stage's own section, ``config.shared`` the types several stages use, ``config.params`` the loader.

One module per stage (and nothing re-exported here) keeps each stage's import closure, hence its code key and
``dvc.yaml`` deps, to its own config: editing one stage's defaults re-runs that stage and what follows it only.
"""
