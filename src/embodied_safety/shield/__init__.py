"""ShieldVLA: rubric-guided safety shield for language-conditioned visuomotor policies (paper 2).

Three sub-packages, by what they hold, plus the env names every stage shares:

* ``policy`` — the policy being shielded and its data: ``visuomotor`` (the ``GaussianPolicy`` protocol and the
  from-scratch CNN policy), ``state`` (the MLP policy on Dubins-VL's state), ``demos`` (scripted-expert
  demonstrations), ``bc`` (behaviour cloning) and ``rollouts`` (episodes with frames; policy evaluation);
* ``costs`` — the rubric cost pipeline (§4.2, App. E; docs/shield_costs.md): ``rubrics`` (the K-rubric sets
  and ρ = Σ_k w_k V_k), ``pixel_scorer`` (the embedded default scorer, reading rendered frames only),
  ``vlm_scorer`` (the verbatim E.4 prompts in ``prompts/`` over an OpenAI-compatible endpoint, cached),
  ``calibrate`` (Platt scaling on the per-episode safety bit, ℓ̂ = −(aρ + b)), ``rtd``
  (Refinement-through-Differentiation, Algorithm 2), ``metrics`` (Tables 8 and 11), ``margins`` (the margin
  sources ℓ that train the critic: rubric, gt, binary) and ``tiny_vlm`` (a random LLaVA for wire-path tests);
* ``rl`` — the safety critic and the gated PPO (docs/shield_ppo.md): ``critic`` (the HJ critic, replay,
  warm start), ``vecenv`` (the batched training env), ``ppo`` (Algorithm 1 and its baselines), ``runs`` (the
  ``shield_ppo`` stage's run matrix: configs, warm critics, evaluation), ``gate_check`` (the offline acceptance
  check), ``report`` (tables and figures), ``results`` (what a stage run writes per env) and
  ``state_control`` (the state-based control);
* ``envs`` — the short env names (``dubins``, ``turtlebot``, ``franka``) and their constructors.

Importing the package itself pulls in nothing heavy; submodules import torch / transformers where used.
"""
