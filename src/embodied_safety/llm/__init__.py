"""The lowest layer of every LLM/VLM call (critics, rubric scorer, RTD proposer, judges, the served actor).

* :mod:`.parsing`: the first JSON object in a reply.
* :mod:`.ask`: the one structured-ask loop (ask, parse, re-ask only what failed) and its on-disk cache.
* :mod:`.chat`: the OpenAI-compatible chat client (our retry policy, timeouts, request ``extra`` body).

It imports nothing of the package above :mod:`embodied_safety.io` and :mod:`embodied_safety.errors`.
"""
