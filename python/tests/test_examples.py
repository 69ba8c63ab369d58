"""examples/python/train_two_ranks.py, the README's Python quick start, run as a user runs it:
two processes, gloo, one step; its loss is the single-process loss of the same model."""

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "train_two_ranks.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.torch_dist
def test_the_quick_start_trains_one_step_on_two_processes():
    env = dict(os.environ, MASTER_PORT=str(free_port()))
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    found = re.search(r"rank (\d): mean loss ([0-9.]+) over 4 micro-batches", run.stdout)
    assert found, run.stdout
    # The reference: the same seed, layers and data in one process.
    torch.manual_seed(0)
    layers = [torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh()) for _ in range(4)]
    x, y = torch.randn(16, 8), torch.randn(16, 8)
    out = x
    for layer in layers:
        out = layer(out)
    losses = [torch.nn.functional.mse_loss(o, t) for o, t in zip(out.chunk(4), y.chunk(4))]
    assert found.group(1) == "0"  # ZB-V: the last stage is on rank 0
    assert abs(float(found.group(2)) - torch.stack(losses).mean().item()) < 1e-6
