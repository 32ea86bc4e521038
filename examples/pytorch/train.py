#!/usr/bin/env python3
"""A small data-parallel PyTorch training job that survives gpusched's
resizes, preemptions and node losses by checkpointing.

Run it under torchrun (one torchrun per node: gpusched starts one replica
per node); see README.md. It trains a linear model on synthetic data with
DistributedDataParallel (gloo on CPU, NCCL when CUDA is there). Each step
uses a global batch of --batch samples chosen by the step number alone and
split evenly between the ranks, so the model after N steps is the same
whatever world sizes the job ran at: a step lost or done twice would show
in the weights.

Checkpoints: rank 0 writes --ckpt (torch.save, atomically: a temporary
file, then a rename) every --ckpt-every steps and when the job stops, and
reports each one to gpusched through $GPUSCHED_PROGRESS_FILE
("steps=N checkpoint=1"). Every worker resumes from it when it starts. The
checkpoint holds the world size of every step done, so the job's history
survives its restarts.

Stopping: on SIGTERM (gpusched stops the replica: a preemption, a shrink
that takes this node out; or torchrun restarts its workers for a new
rendezvous) a worker finishes its step. Every step ends with an all-reduce
of the ranks' stop flags, so all ranks stop after the same step; rank 0
then saves the checkpoint. A worker that was not signalled itself (a peer
is leaving) exits with status 75 so that torchrun restarts it in a new
rendezvous with the new world size; a signalled one exits with 0.

Without torchrun (no WORLD_SIZE) it trains in one process without
torch.distributed: the reference result of the same steps.
"""

import argparse
import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

FEATURES = 8
EXIT_PEER_LEFT = 75  # EX_TEMPFAIL: torchrun restarts the worker


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=200, help="total steps")
    p.add_argument("--batch", type=int, default=12, help="global batch (a multiple of every world size)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--step-ms", type=int, default=0, help="sleep this long in every step (a stand-in for work)")
    p.add_argument("--ckpt", default="ckpt.pt", help="checkpoint file (shared by all nodes)")
    p.add_argument("--ckpt-every", type=int, default=10, help="checkpoint every this many steps")
    p.add_argument("--events", default="", help="append JSON events here (rank 0: one per step)")
    p.add_argument("--result", default="", help="write the final weights and history here as JSON")
    return p.parse_args()


class Stop:
    """Stop remembers a SIGTERM; the training loop looks at it after each step."""

    def __init__(self):
        self.signalled = False
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum, frame):
        self.signalled = True


def batch(step, size):
    """batch returns the step's global batch: the same for every world size."""
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(size, FEATURES, generator=g)
    w = torch.arange(1, FEATURES + 1, dtype=torch.float32) / FEATURES
    y = x @ w + 0.5 + 0.01 * torch.randn(size, generator=g)
    return x, y.unsqueeze(1)


def log_event(path, **fields):
    if not path:
        return
    fields["t"] = time.time()
    with open(path, "a") as f:
        f.write(json.dumps(fields) + "\n")


def report(step, checkpoint):
    """report appends the job's progress to gpusched's progress file."""
    path = os.environ.get("GPUSCHED_PROGRESS_FILE")
    if path:
        with open(path, "a") as f:
            f.write(f"steps={step}{' checkpoint=1' if checkpoint else ''}\n")


def save(path, model, opt, history):
    tmp = f"{path}.tmp.{os.getpid()}"
    torch.save({"step": len(history), "model": model.state_dict(), "opt": opt.state_dict(),
                "history": history}, tmp)
    os.replace(tmp, path)
    report(len(history), True)


def load(path, model, opt):
    """load restores the checkpoint at path, if any, and returns its history."""
    if not os.path.exists(path):
        return []
    ck = torch.load(path, map_location="cpu")
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    return ck["history"]


def setup():
    """setup joins the process group torchrun describes; (rank, world) or (0, 1) alone."""
    if "WORLD_SIZE" not in os.environ:
        return 0, 1
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group(backend)
    return dist.get_rank(), dist.get_world_size()


def main():
    args = parse_args()
    stop = Stop()
    rank, world = setup()
    if args.batch % world:
        sys.exit(f"the global batch {args.batch} does not split between {world} ranks")
    device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    torch.manual_seed(0)
    model = torch.nn.Linear(FEATURES, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    history = load(args.ckpt, model, opt)
    net = torch.nn.parallel.DistributedDataParallel(model) if dist.is_initialized() else model
    log_event(args.events, event="start", rank=rank, world=world, step=len(history), pid=os.getpid(),
              backend=dist.get_backend() if dist.is_initialized() else "none", device=str(device),
              checkpoint_steps=int(os.environ.get("GPUSCHED_CHECKPOINT_STEPS", "-1")),
              restarts=int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")))
    share = args.batch // world
    while len(history) < args.steps:
        step = len(history)
        x, y = batch(step, args.batch)
        x, y = x[rank * share:(rank + 1) * share].to(device), y[rank * share:(rank + 1) * share].to(device)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()  # DDP averages the gradients of the ranks: the global batch's
        opt.step()
        history.append(world)
        time.sleep(args.step_ms / 1000)
        if rank == 0:
            log_event(args.events, event="step", step=step, world=world, loss=loss.item())
        flags = torch.tensor([1.0 if stop.signalled else 0.0], device=device)
        if dist.is_initialized():
            dist.all_reduce(flags)  # everyone stops after the same step
        stopping = flags.item() > 0
        if rank == 0 and (stopping or len(history) % args.ckpt_every == 0 or len(history) == args.steps):
            save(args.ckpt, model, opt, history)
        elif rank == 0:
            report(len(history), False)
        if stopping:
            log_event(args.events, event="stop", rank=rank, step=len(history), signalled=stop.signalled)
            sys.exit(0 if stop.signalled else EXIT_PEER_LEFT)
    if rank == 0:
        log_event(args.events, event="done", step=len(history))
        if args.result:
            with open(args.result, "w") as f:
                json.dump({"steps": len(history), "history": history,
                           "weights": [float(v) for v in torch.cat([p.detach().flatten().cpu()
                                                                    for p in model.parameters()])]}, f)
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
