"""FairMedAgent: trajectories, acceptable-action bands, counterfactual metrics and the instability floor."""
