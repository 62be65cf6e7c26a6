"""policy_gate never passes an action whose capability was not measured (no acceptable-action band)."""

from fairlib.agent.gate import policy_gate
from fairlib.agent.simulate import simulate_trajectories


def test_without_bands_capability_is_unmeasured_and_the_entry_is_withheld():
    traj = simulate_trajectories(n_vignettes=6, n_replicates=3, seed=1).trajectories
    g = policy_gate(traj, bands=None, min_entropy=0.0)
    assert len(g) > 0
    assert g.capability_in_band.isna().all()
    # before: capability was set to 1.0 and the straddling count to its minimum, so the gate passed on entropy alone
    assert (g.status != "qualified").all(), g[["action", "status", "reasons"]]
    assert g.reasons.str.contains("capab", case=False).all()
