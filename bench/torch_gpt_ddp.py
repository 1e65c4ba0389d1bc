"""The torch_gpt plugin's model in PyTorch (Python), for comparing Cohort's torch_gpt with
PyTorch DDP on CPUs: the character-level GPT of plugins/torch_gpt/gpt_model.h, on the same text
with the same records, in batches of the plugin's shapes.

- default_text(): the plugin's default text, read out of plugins/torch_gpt/default_text.h (its
  raw string literals joined), so both sides learn the same bytes.
- Corpus: the text's vocabulary (its sorted distinct bytes) and records, as gpt_model.h defines
  them: training record r is the window of CONTEXT + 1 tokens starting at r in the first 90% of
  the text; validation record r starts at r * CONTEXT in the rest.
- gpt_model(gpt, vocabulary, seed): the network, its modules built in MakeGpt's order and then
  initialized as MakeGpt does (N(0, 0.02) for every 2-dimensional parameter, zero biases), after
  torch.manual_seed(seed); with the same seed it starts from the plugin's values (the same CPU
  generator and the same draws).
- batches(gpt, corpus, world, rank, seed): an endless stream of one rank's (inputs, targets),
  each (BATCH // WORLD, CONTEXT) int64, the plugin's shapes at WORLD slots; global batch t is
  positions [t BATCH, (t + 1) BATCH) of a stream of shuffled epochs and rank r takes its r-th
  contiguous slice, as Cohort's sampler does (the shuffle itself is torch's, not Cohort's).
- adam_step(model, learning_rate, inputs, targets, zero): one training step as
  ddp_common.adam_step makes one, with the loss of gpt_model.h (the mean next-character
  cross-entropy); with `zero`, Adam wrapped in torch's ZeroRedundancyOptimizer (each process keeps
  the state of its share of the parameters and broadcasts them after its step).

Run alone it times the PyTorch side: DDP over Gloo at 1 and 2 processes, one compute thread each,
each rank training on one batch drawn once (data costs nothing), with ddp_common's ranks and
timing, and prints one JSON line {"name", "value" (records/s at 2), "unit", "peer" (at 1),
"peer_value", "ratio" (the scaling efficiency)}:

  /usr/bin/python3 bench/torch_gpt_ddp.py [--batch 32] [--batches 100] [--context 32]
      [--embedding 64] [--heads 4] [--layers 2] [--learning-rate 0.003] [--zero]

The defaults are examples/torch_gpt.yaml's. Needs PyTorch (Debian: apt install python3-torch).
torch is imported only inside the functions that need it.
"""
import argparse
import collections
import os
import re

import ddp_common  # beside this script

NAME = "torch_gpt_ddp"
DEFAULT_TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plugins",
                            "torch_gpt", "default_text.h")
SEED = 7

# The model's size and the training the plugin's hyperparameters give it (examples/torch_gpt.yaml).
Gpt = collections.namedtuple("Gpt", "context embedding heads layers batch learning_rate")


def default_text(path=DEFAULT_TEXT):
    """The bytes of the plugin's default text: the raw string literals of default_text.h."""
    with open(path, "rb") as f:
        header = f.read()
    pieces = re.findall(rb'R"text\((.*?)\)text"', header, re.S)
    if not pieces:
        raise SystemExit(f"{NAME}: no text in {path}")
    return b"".join(pieces)


class Corpus:
    """The text's vocabulary and records, as gpt_model.h's Corpus (see the top of this file)."""

    def __init__(self, text, context):
        import torch
        if len(text) < 10 * (context + 1):
            raise ValueError(f"the text holds {len(text)} bytes; context {context} needs at least "
                             f"{10 * (context + 1)}")
        self.context = context
        self.vocabulary = sorted(set(text))
        token = {byte: i for i, byte in enumerate(self.vocabulary)}
        self.tokens = torch.tensor([token[byte] for byte in text], dtype=torch.int64)
        self.training_end = len(text) * 9 // 10
        self.training_records = self.training_end - context
        self.validation_records = (len(text) - self.training_end - 1) // context

    def windows(self, records, training=True):
        """The records' windows: a (len(records), context + 1) int64 tensor of tokens."""
        import torch
        starts = torch.as_tensor(records, dtype=torch.int64)
        if not training:
            starts = self.training_end + starts * self.context
        return self.tokens[starts.unsqueeze(1) + torch.arange(self.context + 1)]


def gpt_model(gpt, vocabulary, seed=SEED):
    """The Gpt's network over VOCABULARY tokens, on the CPU, initialized from SEED as MakeGpt
    initializes the plugin's (see the top of this file)."""
    import torch
    import torch.nn.functional as F

    class CausalSelfAttention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(gpt.embedding, 3 * gpt.embedding)
            self.projection = torch.nn.Linear(gpt.embedding, gpt.embedding)

        def forward(self, x):
            batch, time, embedding = x.shape
            width = embedding // gpt.heads
            qkv = self.qkv(x).view(batch, time, 3, gpt.heads, width).permute(2, 0, 3, 1, 4)
            scores = torch.matmul(qkv[0], qkv[1].transpose(-2, -1)) / (width ** 0.5)
            mask = torch.full((time, time), float("-inf"), dtype=x.dtype).triu(1)
            attended = torch.matmul(torch.softmax(scores + mask, -1), qkv[2])
            return self.projection(attended.transpose(1, 2).reshape(batch, time, embedding))

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm = torch.nn.LayerNorm(gpt.embedding)
            self.attention = CausalSelfAttention()
            self.mlp_norm = torch.nn.LayerNorm(gpt.embedding)
            self.expand = torch.nn.Linear(gpt.embedding, 4 * gpt.embedding)
            self.contract = torch.nn.Linear(4 * gpt.embedding, gpt.embedding)

        def forward(self, x):
            x = x + self.attention(self.attention_norm(x))
            return x + self.contract(F.gelu(self.expand(self.mlp_norm(x))))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # MakeGpt's order: embeddings, the (empty) block list, final norm, head, then blocks.
            self.token_embedding = torch.nn.Embedding(vocabulary, gpt.embedding)
            self.position_embedding = torch.nn.Embedding(gpt.context, gpt.embedding)
            self.blocks = torch.nn.ModuleList()
            self.final_norm = torch.nn.LayerNorm(gpt.embedding)
            self.head = torch.nn.Linear(gpt.embedding, vocabulary)
            for _ in range(gpt.layers):
                self.blocks.append(Block())

        def forward(self, tokens):
            """tokens (batch, time) int64 -> logits (batch, time, vocabulary)."""
            positions = torch.arange(tokens.shape[1], device=tokens.device)
            x = self.token_embedding(tokens) + self.position_embedding(positions)
            for block in self.blocks:
                x = block(x)
            return self.head(self.final_norm(x))

    torch.manual_seed(seed)
    model = Model()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.02)
            elif name.endswith("bias"):
                p.zero_()
    return model


def batches(gpt, corpus, world=1, rank=0, seed=SEED):
    """Endless (inputs, targets) of rank RANK of WORLD: each (BATCH // WORLD, CONTEXT) int64,
    the r-th contiguous slice of each global batch of shuffled training records."""
    import torch
    per_rank = gpt.batch // world
    generator = torch.Generator().manual_seed(seed)
    stream = torch.empty(0, dtype=torch.int64)
    while True:
        while len(stream) < gpt.batch:
            stream = torch.cat([stream, torch.randperm(corpus.training_records,
                                                       generator=generator)])
        batch, stream = stream[:gpt.batch], stream[gpt.batch:]
        windows = corpus.windows(batch[rank * per_rank:(rank + 1) * per_rank])
        yield windows[:, :-1], windows[:, 1:]


def loss_of(model, inputs, targets):
    """The mean next-character cross-entropy of MODEL on the batch."""
    import torch.nn.functional as F
    logits = model(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def adam_step(model, learning_rate, inputs, targets, zero=False):
    """A function that trains MODEL on the batch once: loss, backward (where DDP exchanges the
    gradients), an Adam step (PyTorch's defaults, as Cohort's `adam`), sharded by
    ZeroRedundancyOptimizer with ZERO."""
    import torch
    if zero:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam,
                                            lr=learning_rate)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_of(model, inputs, targets).backward()
        optimizer.step()

    return step


def gpt_of(args):
    return Gpt(args.context, args.embedding, args.heads, args.layers, args.batch,
               args.learning_rate)


def torch_rank(args):
    """One DDP rank over Gloo, one compute thread: trains on one batch drawn once, and rank 0
    prints its records/s as JSON."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    ddp_common.join_group("gloo", args.torch_rank, args.world, args.port)
    gpt = gpt_of(args)
    corpus = Corpus(default_text(), gpt.context)
    model = gpt_model(gpt, len(corpus.vocabulary))
    model = DistributedDataParallel(model) if args.world > 1 else model
    inputs, targets = next(batches(gpt, corpus, args.world, args.torch_rank))
    step = adam_step(model, gpt.learning_rate, inputs, targets, args.zero)
    ddp_common.time_training(args.torch_rank, len(inputs) * args.world, args.batches, step,
                             dist.barrier)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--context", type=int, default=32)
    parser.add_argument("--embedding", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=0.003)
    parser.add_argument("--zero", action="store_true",
                        help="Adam in torch's ZeroRedundancyOptimizer")
    parser.add_argument("--torch-rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--world", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_rank is not None:
        torch_rank(args)
        return
    if args.batch % 2 != 0 or args.batches < 1:
        parser.error("needs an even --batch and --batches >= 1")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise SystemExit(f"{NAME}: needs PyTorch (Debian: apt install python3-torch)")
    passed = ["--batch", str(args.batch), "--batches", str(args.batches),
              "--context", str(args.context), "--embedding", str(args.embedding),
              "--heads", str(args.heads), "--layers", str(args.layers),
              "--learning-rate", str(args.learning_rate)] + (["--zero"] if args.zero else [])
    shape = (f"gpt{args.layers}x{args.embedding}_ctx{args.context}_batch{args.batch}"
             + ("_zero" if args.zero else ""))
    ddp_common.time_worlds(NAME, __file__, passed, shape)


if __name__ == "__main__":
    main()
