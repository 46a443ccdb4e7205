"""ShieldVLA: rubric-guided safety shield for language-conditioned visuomotor policies (paper 2).

The rubric cost pipeline (§4.2, App. E; docs/shield_costs.md): ``rubrics`` (the K-rubric sets and
ρ = Σ_k w_k V_k), ``pixel_scorer`` (the embedded default scorer, reading rendered frames only),
``vlm_scorer`` (the verbatim E.4 prompts over an OpenAI-compatible endpoint, cached), ``calibrate``
(Platt scaling on the per-episode safety bit, ℓ̂ = −(aρ + b)), ``rtd`` (Refinement-through-Differentiation,
Algorithm 2), ``cost_metrics`` (Tables 8 and 11) and ``tiny_vlm`` (a random LLaVA for wire-path tests).
Importing the package itself pulls in nothing heavy; submodules import torch / transformers where used.
"""
