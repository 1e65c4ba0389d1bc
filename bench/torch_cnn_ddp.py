"""The torch_cnn plugin's model in PyTorch (Python), for comparing Cohort's torch_cnn with PyTorch
DDP on CPUs: the small ResNet of plugins/torch_cnn/cnn_model.h, in batches of the plugin's shapes.

- cnn_model(cnn, seed): the network, its modules built in cnn_model.h's order (stem, block1,
  block2, head; inside each, in the order the C++ constructor registers them) with LibTorch's
  default initialization, after torch.manual_seed(seed); with the same seed it starts from the
  plugin's values (the same CPU generator and the same draws). Its parameters carry the
  plugin's names in the plugin's order (stem.conv.weight, stem.bn.weight, ...).
- synthetic_batch(cnn, world): one rank's batch, images (BATCH // WORLD, 1, 28, 28) float32 in
  [0, 1) and labels (BATCH // WORLD,) int64 in [0, 10): the shapes train_batch gives the plugin's
  network at WORLD slots. The values are random, drawn once, so loading data costs nothing
  (the plugin's synthetic shapes are drawn in C++, cnn_data.cc).
- sgd_step(model, cnn, images, labels): one training step as ddp_common.adam_step makes one, with
  the plugin's loss (mean cross-entropy) and examples/torch_cnn.yaml's optimizer, SGD with
  momentum (PyTorch's rule, as Cohort's `sgd`). ddp_common.adam_step fits the model too.

BatchNorm trains in train mode on each rank's own records, as the plugin does at several slots.
DDP is built with broadcast_buffers=False: like Cohort, which broadcasts the BN statistics from
rank 0 once at the start (as DDP's constructor does), it then leaves each rank its own, rather
than broadcasting rank 0's before every forward.

Run alone it times the PyTorch side: DDP over Gloo at 1 and 2 processes, one compute thread each,
with ddp_common's ranks and timing, and prints one JSON line {"name", "value" (records/s at 2),
"unit", "peer" (at 1), "peer_value", "ratio" (the scaling efficiency)}:

  /usr/bin/python3 bench/torch_cnn_ddp.py [--batch 32] [--batches 200] [--width 8]
      [--learning-rate 0.05] [--momentum 0.9]

The defaults are examples/torch_cnn.yaml's. Needs PyTorch (Debian: apt install python3-torch).
torch is imported only inside the functions that need it.
"""
import argparse
import collections

import ddp_common  # beside this script

NAME = "torch_cnn_ddp"
SEED = 7
SIDE = 28
CLASSES = 10

# The model's width and the training examples/torch_cnn.yaml gives it.
Cnn = collections.namedtuple("Cnn", "width batch learning_rate momentum")


def cnn_model(cnn, seed=SEED):
    """The Cnn's network, on the CPU, initialized from SEED as MakeCnn initializes the plugin's
    (see the top of this file). images (N, 1, 28, 28) -> logits (N, 10)."""
    import torch
    from torch import nn

    def conv(channels_in, channels_out, kernel, stride):
        return nn.Conv2d(channels_in, channels_out, kernel, stride=stride, padding=kernel // 2,
                         bias=False)

    class Stem(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.conv = conv(1, width, 5, 2)
            self.bn = nn.BatchNorm2d(width)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x)))

    class ResidualBlock(nn.Module):
        def __init__(self, channels_in, channels_out, stride):
            super().__init__()
            self.conv1 = conv(channels_in, channels_out, 3, stride)
            self.bn1 = nn.BatchNorm2d(channels_out)
            self.conv2 = conv(channels_out, channels_out, 3, 1)
            self.bn2 = nn.BatchNorm2d(channels_out)
            self.projection = None
            if stride != 1 or channels_in != channels_out:
                self.projection = conv(channels_in, channels_out, 1, stride)
                self.projection_bn = nn.BatchNorm2d(channels_out)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            skip = self.projection_bn(self.projection(x)) if self.projection is not None else x
            return torch.relu(y + skip)

    class Model(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.stem = Stem(width)
            self.block1 = ResidualBlock(width, width, 1)
            self.block2 = ResidualBlock(width, 2 * width, 2)
            self.head = nn.Linear(2 * width, CLASSES)

        def forward(self, images):
            x = self.block2(self.block1(self.stem(images)))
            return self.head(x.mean((2, 3)))

    torch.manual_seed(seed)
    return Model(cnn.width)


def synthetic_batch(cnn, world):
    """One rank's share of a global batch (see the top of this file)."""
    import torch
    per_rank = cnn.batch // world
    images = torch.rand(per_rank, 1, SIDE, SIDE)
    labels = torch.randint(0, CLASSES, (per_rank,))
    return images, labels


def sgd_step(model, cnn, images, labels):
    """A function that trains MODEL on the batch once: mean cross-entropy, backward (where DDP
    exchanges the gradients), an SGD step with momentum."""
    import torch
    optimizer = torch.optim.SGD(model.parameters(), lr=cnn.learning_rate, momentum=cnn.momentum)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(images), labels).backward()
        optimizer.step()

    return step


def cnn_of(args):
    return Cnn(args.width, args.batch, args.learning_rate, args.momentum)


def torch_rank(args):
    """One DDP rank over Gloo, one compute thread: trains on one batch drawn once, and rank 0
    prints its records/s as JSON."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    ddp_common.join_group("gloo", args.torch_rank, args.world, args.port)
    cnn = cnn_of(args)
    model = cnn_model(cnn)
    model.train()
    if args.world > 1:
        model = DistributedDataParallel(model, broadcast_buffers=False)
    images, labels = synthetic_batch(cnn, args.world)
    step = sgd_step(model, cnn, images, labels)
    ddp_common.time_training(args.torch_rank, len(images) * args.world, args.batches, step,
                             dist.barrier)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--torch-rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_rank is not None:
        torch_rank(args)
        return
    if args.batch % 2 != 0 or args.batches < 1 or args.width < 1:
        parser.error("needs an even --batch, --batches >= 1 and --width >= 1")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise SystemExit(f"{NAME}: needs PyTorch (Debian: apt install python3-torch)")
    passed = ["--batch", str(args.batch), "--batches", str(args.batches),
              "--width", str(args.width), "--learning-rate", str(args.learning_rate),
              "--momentum", str(args.momentum)]
    shape = f"cnn{args.width}_batch{args.batch}"
    ddp_common.time_worlds(NAME, __file__, passed, shape)


if __name__ == "__main__":
    main()
