"""One training step of a 4-layer MLP on two local processes (gloo, CPU), in PyTorch's own
pipeline runtime with ctpipe's ZB-V schedule (P = 2, m = 4; each rank holds two stages).

    build/venv/bin/python examples/python/train_two_ranks.py

Prints the mean loss of the step on the rank that holds the last stage. docs/pytorch.md
explains each line; python/tests/test_examples.py runs this file.
"""

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.pipelining import PipelineStage

import ctpipe
import ctpipe.torch


def train(rank: int, world: int) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world)
    schedule = ctpipe.Schedule("zbv", P=world, m=4)
    torch.manual_seed(0)                                 # the same model on every rank
    layers = [torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh()) for _ in range(schedule.num_stages)]
    x, y = torch.randn(16, 8), torch.randn(16, 8)
    example = torch.zeros(4, 8, requires_grad=True)     # one micro-batch's activations
    stages = [PipelineStage(layers[s], s, schedule.num_stages, torch.device("cpu"),
                            input_args=(example,), output_args=(example,))
              for s in schedule.stages_of(rank)]
    sched = ctpipe.torch.pipeline_schedule(stages, schedule, loss_fn=torch.nn.functional.mse_loss)
    held, losses = schedule.stages_of(rank), []
    sched.step(*((x,) if 0 in held else ()),
               **({"target": y, "losses": losses} if schedule.num_stages - 1 in held else {}))
    if losses:
        print(f"rank {rank}: mean loss {torch.stack(losses).mean().item():.6f} over {len(losses)} micro-batches")
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    mp.spawn(train, args=(2,), nprocs=2)
