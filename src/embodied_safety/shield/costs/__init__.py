"""The rubric cost pipeline (§4.2, App. E; docs/shield_costs.md): rubric sets, the pixel and VLM scorers,
Platt calibration, RTD, the cost-quality metrics and the margin sources that train the safety critic."""
