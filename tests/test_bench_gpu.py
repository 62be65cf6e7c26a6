"""benchmarks/bench_gpu.py (the GPU paths in one run) on the CPU: the same steps with fp32 / bf16 on a tiny local
model, so the script a GPU session runs is known to work end to end; without a GPU it refuses `--device cuda`."""

import importlib.util, json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_gpu", ROOT / "benchmarks" / "bench_gpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_gpu_refuses_without_cuda(monkeypatch, capsys, tmp_path):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert _bench().main(["--model", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_bench_gpu_steps_run_on_cpu(tmp_path):
    from fairlib.llm.loading import make_tiny_model

    d = tmp_path / "tiny"
    make_tiny_model(d, seed=0)
    out = tmp_path / "o"
    rc = _bench().main(
        [
            "--model",
            str(d),
            "--device",
            "cpu",
            "--precisions",
            "fp32",
            "bf16",
            "--n",
            "13",
            "--batch-size",
            "4",
            "--naive-n",
            "5",
            "--lora-cases",
            "4",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    res = json.loads((out / "bench_gpu.json").read_text())
    fp32, bf16 = res["precisions"]
    assert res["n_prompts"] == 13 and fp32["precision"] == "fp32" and bf16["precision"] == "bf16"
    assert fp32["max_abs_dp"] < 1e-5  # the same fp32 model as the reference
    assert bf16["max_abs_dp"] > 0 and np.isfinite(
        bf16["max_abs_dp"]
    )  # a real precision change, measured
    assert fp32["one_vs_batched_max_abs_dp"] < 1e-5 and fp32["batched_speedup"] > 0
    L = res["lora"]
    assert L["n_examples"] == 8 and L["n_steps"] >= 1 and np.isfinite(L["last_loss"])
    assert (
        L["branch_vs_merged_fp32_max_abs_dp"] < 1e-4
    )  # unmerged LoRA branch == merged weights, same precision
    assert (out / "adapter").is_dir() and "| bf16 |" in (out / "bench_gpu.md").read_text()
