"""A Python training epoch (examples/gcn_ddp.py) against dgcn-train.

Both train the same GCN (3 layers, ``--hidden``, Adam, dropout 0.5) on the
same store with the same fanouts, batch size per rank, ranks, torch threads
and sampler workers, for ``--epochs`` epochs (or their first ``--batches``
batches each), no evaluation; each reports its training seconds per epoch.
Two pairings, ``--repeats`` times each, medians (and the median of each
repeat's ratio, its two runs back to back):

- ``read_store``: dgcn-train as it runs by default (the first layer reads the
  feature rows from the store) against the example with ``--read-store``
  (``NeighborLoader(gather_features=False)``, ``GCNConv(..., n_id=...)``);
- ``gathered``: ``dgcn-train --gather-in-loader`` against the example as a
  PyG user writes it (every batch carries ``x``).

The first epoch and the later ones are reported apart: a process's first
batches pay its warm-up, mostly the first touch of the memory it will reuse
from then on, whose cost depends on the machine (on a sandboxed VM a fresh
page can cost 40 us, 100 times a bare machine's, and memory another process
freed a moment ago is cheap again). For the same reason the two sides take
turns at running first, repeat by repeat, and every run starts after
``--settle`` seconds of idle: by then the guest has handed the memory the
last run freed back to the host (free page reporting), so each side's first
epoch pays for all of its fresh memory instead of finding some still backed.
Without it, the same example's first epoch took 7.4 s after a dgcn-train run
and 12.2 s after a pause (one rank, gathered).

A ``control`` pairing runs dgcn-train (as in ``read_store``) against
itself: the spread of its ratios is what the host's noise alone gives, the
yardstick for the others' (on this VM, side by side and gated, 0.93-1.11x a
repeat).

``--side-by-side`` runs the two sides of a pairing at the same time instead,
each with ``--ranks`` ranks pinned to its own half of the CPUs (the halves
swap every repeat), both mapping the store's one expanded copy (``--load
shared``): a slow or fast spell of the host, which on a shared VM moves one
side's seconds per batch by 20% from one minute to the next, then falls on
both sides of a ratio at once. Every rank of both waits at a start gate
once built (``--start-gate``, train/start_gate.h), which the bench opens
when all are there, so that the first epochs begin within about 10 ms of
each other however long each took to start up, and each side runs one
epoch more than is compared, so that the other's compared epochs never run
alone; ``overlap`` says which share of the compared epochs' time the other
side was training (1.0: all of it).
``--ranks`` defaults to what a half holds, up to 2: on 2 CPUs one rank a
side, the per-batch work of every rank without the all-reduce between
ranks.

Each pairing also compares the two sides' CPU seconds per batch
(``first_epoch_cpu``, ``later_epochs_cpu``: rank 0's process, every
thread, dgcn-train's ``cpu_s`` and the example's ``epoch_cpu_s``), the same
ratios over the work each side did rather than the time it took: a shared
VM's stolen time, which stretches one run's seconds and not the other's,
leaves them be, so they say what the code costs. ``first_epoch_usage`` and
``later_epochs_usage`` give each side's kernel seconds and minor page
faults per batch (medians), where fresh memory shows.

And each gives rank 0's peak CPU cache mapping of either side
(``cpu_cache_peak_mb``, medians; dgcn-train's ``memory`` summary, the
example's JSON): the fresh memory behind most of a first epoch's cost on a
VM, counted, so it moves only with the code and not with the host's noise.

A third, ``pyg``, where PyG's own ``NeighborLoader`` can run (it needs
pyg-lib or torch-sparse; the JSON says which this environment has): PyG's
recipe as its users write it (bench/pyg_epoch.py: every layer over every
sampled node, ``F.dropout``, worker-less loader) for its first
``--pyg-batches`` batches, in seconds per batch against dgcn-train's.
``--model sage|gat`` (``--heads``) runs this pairing alone with that model
on both sides (PyG's ``SAGEConv``/``GATConv``, dgcn-train ``--model``).

    python bench/python_epoch_bench.py --data data/products.gcn
"""
import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def first_json(cmd, returncode, stdout, stderr):
    """The first JSON object a command printed on stdout (rank 0's, for the
    example), or a RuntimeError with its stderr's tail."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith('{')]
    if returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)} failed ({returncode}):\n"
                           f"{stderr[-3000:]}")
    # Ranks share stdout: a line may hold two objects; the first is kept.
    return json.JSONDecoder().raw_decode(lines[0])[0]


def run_json(cmd, env):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return first_json(cmd, out.returncode, out.stdout, out.stderr)


def dgcn_train_cmd(args, gather, epochs, metrics, extra=()):
    cmd = [os.path.join(args.bin, 'dgcn-train'), '--data', args.data,
           '--nproc-per-node', str(args.ranks), '--epochs', str(epochs),
           '--max-batches', str(args.batches), '--eval', 'none',
           '--num-neighbors', args.num_neighbors,
           '--batch-size', str(args.batch_size),
           '--hidden', str(args.hidden), '--threads', str(args.threads),
           '--workers', str(args.workers), '--seed', str(args.seed),
           '--metrics-out', metrics] + model_flags(args) + list(extra)
    return cmd + ['--gather-in-loader'] if gather else cmd


def metrics_epochs(metrics):
    """The epoch lines of dgcn-train's --metrics-out file."""
    with open(metrics) as f:
        return [line for line in map(json.loads, f) if 'epoch_s' in line]


def cache_peak(summary):
    """Rank 0's peak CPU cache mapping in bytes from dgcn-train's summary
    (None without the cache)."""
    peak = summary.get('memory', {}).get('cpu_cache_peak_mapped_bytes')
    return peak[0] if peak else None


def dgcn_train(args, gather, epochs):
    """dgcn-train's training seconds and usage (USAGE) of each epoch (its
    --metrics-out), its batches per epoch and rank 0's peak CPU cache
    mapping in bytes (its summary's memory)."""
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, 'metrics.jsonl')
        summary = run_json(dgcn_train_cmd(args, gather, epochs, metrics),
                           os.environ)
        lines = metrics_epochs(metrics)
    return ([line['epoch_s'] for line in lines], dgcn_train_usage(lines),
            lines[0]['batches'], cache_peak(summary))


# What a process used in an epoch (rank 0's, every thread): CPU seconds,
# the kernel's share of them, minor page faults.
USAGE = ('cpu_s', 'system_s', 'minor_faults')


def dgcn_train_usage(lines):
    """Each epoch's usage from dgcn-train's epoch lines."""
    return [{key: line[key] for key in USAGE} for line in lines]


def example_usage(out):
    """Each epoch's usage from the example's JSON."""
    return [dict(zip(USAGE, used)) for used in
            zip(out['epoch_cpu_s'], out['epoch_system_s'],
                out['epoch_minor_faults'])]


def per_batch(usage, batches):
    """Each epoch's usage divided by its batches."""
    return [{key: used[key] / batches for key in USAGE} for used in usage]


def usage_of(usage_runs, key):
    """One usage measure of every run, by side, as compare() takes them."""
    return {side: [[used[key] for used in run] for run in runs]
            for side, runs in usage_runs.items()}


def usage_medians(usage_runs, epochs):
    """Each side's kernel seconds and minor faults per batch over the epochs
    `epochs` (a slice), medians over the runs."""
    return {side: {f'{key}_per_batch': statistics.median(
        statistics.mean(used[key] for used in run[epochs]) for run in runs)
        for key in ('system_s', 'minor_faults')}
        for side, runs in usage_runs.items()}


def torchrun_cmd(args):
    return [sys.executable, '-m', 'torch.distributed.run', '--standalone',
            '--nproc-per-node', str(args.ranks)]


def launch(args, script_args, env):
    """The last JSON line of rank 0: the ranks started by torchrun, or
    (--launcher direct) as plain processes with the rendezvous variables set,
    as dgcn-train's own launcher starts its ranks (no agent process polling
    them beside the ranks on a small machine)."""
    if args.launcher == 'torchrun':
        return run_json(torchrun_cmd(args) + script_args, env)
    port = 29400 + os.getpid() % 1000
    procs = []
    for rank in range(args.ranks):
        rank_env = dict(env, RANK=str(rank), WORLD_SIZE=str(args.ranks),
                        LOCAL_RANK=str(rank),
                        LOCAL_WORLD_SIZE=str(args.ranks),
                        MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable] + script_args,
                                      env=rank_env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    outs = [p.communicate() for p in procs]
    failed = next((p.returncode for p in procs if p.returncode != 0), 0)
    return first_json(script_args, failed, *outs[0])


def python_example_cmd(args, gather, epochs=None, extra=()):
    cmd = [os.path.join(args.source, 'examples', 'gcn_ddp.py'),
           '--data', args.data, '--epochs', str(epochs or args.epochs),
           '--max-batches', str(args.batches), '--no-eval',
           '--num-neighbors', args.num_neighbors,
           '--batch-size', str(args.batch_size), '--hidden', str(args.hidden),
           '--threads', str(args.threads), '--workers', str(args.workers),
           '--seed', str(args.seed)] + list(extra)
    return cmd if gather else cmd + ['--read-store']


def batches_trained(args, run):
    """The batches an epoch of the example's `run` (its JSON) trained: its
    batches per epoch, or --batches where that is fewer."""
    per_epoch = run['batches_per_epoch']
    return min(args.batches, per_epoch) if args.batches else per_epoch


def python_env(args):
    return dict(os.environ, OMP_NUM_THREADS=str(args.threads))


def python_example(args, gather, epochs=None):
    return launch(args, python_example_cmd(args, gather, epochs),
                  python_env(args))


def pyg_epoch(args):
    cmd = [os.path.join(args.source, 'bench', 'pyg_epoch.py'),
           '--data', args.data, '--max-batches', str(args.pyg_batches),
           '--num-neighbors', args.num_neighbors,
           '--batch-size', str(args.batch_size), '--hidden', str(args.hidden),
           '--threads', str(args.threads), '--seed', str(args.seed)
           ] + model_flags(args)
    return launch(args, cmd, python_env(args))['train_s']


def cpu_halves():
    """This process's CPUs split in two equal halves, one per side of a
    --side-by-side run."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit('--side-by-side needs at least 2 CPUs (one a side)')
    half = len(cpus) // 2
    return cpus[:half], cpus[half:2 * half]


def start_pinned(cmd, env, cpus, tmp, name):
    """cmd started on `cpus` (its children inherit them), its output in
    files (two processes at once never block on a full pipe)."""
    out = open(os.path.join(tmp, name + '.out'), 'w+')
    err = open(os.path.join(tmp, name + '.err'), 'w+')
    proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    return proc, out, err


def finish(started, cmd):
    """The first JSON object of the process's stdout, after it exits."""
    proc, out, err = started
    proc.wait()
    with out, err:
        out.seek(0)
        err.seek(0)
        return first_json(cmd, proc.returncode, out.read(), err.read())


def process_tree(pid):
    """`pid` and every process below it (/proc's children lists). Not its
    process group: torchrun starts each rank in a session of its own."""
    tree = [pid]
    for task in os.listdir(f'/proc/{pid}/task'):
        try:
            with open(f'/proc/{pid}/task/{task}/children') as f:
                children = [int(c) for c in f.read().split()]
        except FileNotFoundError:  # the thread or process has ended
            continue
        for child in children:
            tree += process_tree(child)
    return tree


@contextlib.contextmanager
def stopped_on_error(started):
    """Kills the processes of `started` (start_pinned's, by side) and all
    below them (torchrun's ranks) when the block raises (a side failed, or
    Ctrl-C), so that no rank is left waiting at the gate or training."""
    try:
        yield
    except BaseException:
        for proc, _, _ in started.values():
            if proc.poll() is None:
                for pid in process_tree(proc.pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                proc.wait()
        raise


def open_start_gate(gate, waiters, started):
    """Opens the --start-gate `gate` once `waiters` processes wait at it
    (train/start_gate.h: each made GATE.ready.<pid>) and returns when
    (Unix seconds, just before); a side that exits before is an error with
    its output."""
    folder, name = os.path.split(gate)
    while sum(f.startswith(name + '.ready.')
              for f in os.listdir(folder)) < waiters:
        for side, (proc, _, _) in started.items():
            if proc.poll() is not None:
                finish(started[side], proc.args)
                raise SystemExit(f'{side} exited before its first epoch')
        time.sleep(0.001)
    opened = time.time()
    open(gate, 'w').close()
    return opened


def side_by_side_repeat(args, gather, python_cpus, cpp_cpus, control):
    """One repeat of --side-by-side: the example and dgcn-train at once, each
    on its own CPUs, both mapping the store's one expanded copy (--load
    shared); every rank of both waits at a start gate once built, so that
    the first epochs begin together whichever starts up faster. Each runs
    one epoch more than compared, so that the other's compared epochs never
    run alone. With `control`, dgcn-train takes the example's place.
    Returns each side's epochs as (start, end) times (Unix seconds), their
    usage (USAGE), batches per epoch and rank 0's peak CPU cache mapping."""
    epochs = args.epochs + 1
    with tempfile.TemporaryDirectory() as tmp:
        gate = os.path.join(tmp, 'go')
        # Both sides: the store's one expanded copy, and the gate.
        common = ['--load', 'shared', '--start-gate', gate]
        sides = {}  # side: (command, environment, its metrics file or None)
        for side in ('python', 'dgcn_train'):
            if side == 'dgcn_train' or control:
                metrics = os.path.join(tmp, side + '.jsonl')
                sides[side] = (dgcn_train_cmd(args, gather, epochs, metrics,
                                              common), os.environ, metrics)
            else:
                sides[side] = (torchrun_cmd(args) + python_example_cmd(
                    args, gather, epochs, common), python_env(args), None)
        started, outs = {}, {}
        with stopped_on_error(started):
            for side, (cmd, env, _) in sides.items():
                cpus = python_cpus if side == 'python' else cpp_cpus
                started[side] = start_pinned(cmd, env, cpus, tmp, side)
            open_start_gate(gate, 2 * args.ranks, started)
            for side, (cmd, _, _) in sides.items():
                outs[side] = finish(started[side], cmd)
        spans, usage, batches, peaks = {}, {}, {}, {}
        for side, (cmd, _, metrics) in sides.items():
            out = outs[side]
            if metrics is None:  # the example's JSON
                spans[side] = [(end - s, end) for s, end in
                               zip(out['epoch_s'], out['epoch_end_time'])]
                usage[side] = example_usage(out)
                batches[side] = batches_trained(args, out)
                peaks[side] = out.get('cpu_cache_peak_mapped_bytes')
            else:  # dgcn-train's epoch lines and summary
                lines = metrics_epochs(metrics)
                spans[side] = [(ln['end_time'] - ln['epoch_s'],
                                ln['end_time']) for ln in lines]
                usage[side] = dgcn_train_usage(lines)
                batches[side] = lines[0]['batches']
                peaks[side] = cache_peak(out)
    return spans, usage, batches, peaks


def overlap(spans, other):
    """The share of `spans`' time during which `other` was training."""
    lo, hi = other[0][0], other[-1][1]
    inside = sum(max(0.0, min(e, hi) - max(s, lo)) for s, e in spans)
    return inside / sum(e - s for s, e in spans)


def side_by_side_pairing(args, pairing):
    """--side-by-side: the two sides at the same time on halves of the
    CPUs, which swap every repeat, so that the host's slow and fast spells
    fall on both sides of each ratio at once."""
    gather, control = pairing == 'gathered', pairing == 'control'
    halves = cpu_halves()
    runs = {'python': [], 'dgcn_train': []}
    usage_runs = {'python': [], 'dgcn_train': []}  # per batch
    cache_mb = {'python': [], 'dgcn_train': []}
    offsets, overlaps = [], []
    for repeat in range(args.repeats):
        python_cpus, cpp_cpus = halves[::1 if repeat % 2 == 0 else -1]
        time.sleep(args.settle)
        spans, usage, batches, peaks = side_by_side_repeat(
            args, gather, python_cpus, cpp_cpus, control)
        offset = spans['python'][0][0] - spans['dgcn_train'][0][0]
        offsets.append(offset)
        compared = {side: s[:args.epochs] for side, s in spans.items()}
        overlaps.append(min(
            overlap(compared['python'], spans['dgcn_train']),
            overlap(compared['dgcn_train'], spans['python'])))
        for side in runs:
            runs[side].append([(e - s) / batches[side]
                               for s, e in compared[side]])
            usage_runs[side].append(per_batch(usage[side][:args.epochs],
                                              batches[side]))
            if peaks[side] is not None:
                cache_mb[side].append(peaks[side] / 2**20)
        cpu = {side: [used['cpu_s'] for used in usage_runs[side][-1]]
               for side in usage_runs}
        print(f'{pairing} side by side: s/batch by epoch: dgcn-train '
              f'{fmt(runs["dgcn_train"][-1])} (CPUs {cpp_cpus}), '
              f'{"dgcn-train again" if control else "python"} '
              f'{fmt(runs["python"][-1])} (CPUs {python_cpus}); first epochs '
              f'{offset:+.2f} s apart; CPU s/batch dgcn-train '
              f'{fmt(cpu["dgcn_train"])}, other side {fmt(cpu["python"])}',
              file=sys.stderr, flush=True)
    return runs, usage_runs, cache_mb, {'cpus': [list(h) for h in halves],
                            'first_epoch_offsets_s': offsets,
                            'overlap': overlaps}


def model_flags(args):
    """--model (and --heads for GAT), the same flags for dgcn-train and
    bench/pyg_epoch.py."""
    flags = ['--model', args.model]
    if args.model == 'gat':
        flags += ['--heads', str(args.heads)]
    return flags


def pyg_sampler():
    try:
        import torch_geometric.typing as t
    except ImportError as e:
        return f'torch_geometric not importable: {e}'
    if t.WITH_PYG_LIB:
        return 'pyg-lib'
    if t.WITH_TORCH_SPARSE:
        return 'torch-sparse'
    return None


def fmt(per_batch):
    return ' '.join(f'{s:.3f}' for s in per_batch)


def compare(runs, epochs):
    """Seconds per batch of each run over the epochs `epochs` (a slice of
    its epochs, averaged), the ratio of the medians, and the ratio within
    each repeat, whose two runs came one after the other, so that a slow
    spell of the host weighs on both sides of one ratio rather than on one
    side's median."""
    per_run = {side: [statistics.mean(r[epochs]) for r in rs]
               for side, rs in runs.items()}
    by_repeat = [py / cpp for py, cpp in zip(per_run['python'],
                                             per_run['dgcn_train'])]
    return {'dgcn_train_s_per_batch': per_run['dgcn_train'],
            'python_s_per_batch': per_run['python'],
            'python_over_dgcn_train': statistics.median(per_run['python']) /
            statistics.median(per_run['dgcn_train']),
            'python_over_dgcn_train_by_repeat': by_repeat,
            'median_of_repeat_ratios': statistics.median(by_repeat)}


def pyg_pairing(args):
    """PyG's own epoch against dgcn-train, seconds per batch (one epoch
    each)."""
    cpp, py = [], []
    for _ in range(args.repeats):
        py.append(pyg_epoch(args) / args.pyg_batches)
        epoch_s, _, batches, _ = dgcn_train(args, False, 1)
        cpp.append(epoch_s[0] / batches)
        print(f'pyg: dgcn-train {cpp[-1]:.3f} s/batch, PyG {py[-1]:.3f} '
              's/batch', file=sys.stderr, flush=True)
    return {'dgcn_train_s_per_batch': cpp, 'pyg_s_per_batch': py,
            'pyg_over_dgcn_train': statistics.median(py) /
            statistics.median(cpp)}


def sequential_pairing(args, pairing):
    """The two sides one after the other, --repeats times, taking turns at
    running first; each run after --settle seconds of idle."""
    gather, control = pairing == 'gathered', pairing == 'control'
    runs = {'python': [], 'dgcn_train': []}
    usage_runs = {'python': [], 'dgcn_train': []}  # per batch
    # Rank 0's peak CPU cache mapping, MB: the fresh memory a first
    # epoch pays for (models/cpu_allocator.cpp), counted rather than timed.
    cache_mb = {'python': [], 'dgcn_train': []}
    for repeat in range(args.repeats):
        # Taking turns: the second run finds memory the first freed.
        order = ['python', 'dgcn_train'][::1 if repeat % 2 == 0 else -1]
        for side in order:
            time.sleep(args.settle)
            if side == 'python' and not control:
                run = python_example(args, gather)
                batches = batches_trained(args, run)
                epoch_s, usage = run['epoch_s'], example_usage(run)
                peak = run.get('cpu_cache_peak_mapped_bytes')
            else:
                epoch_s, usage, batches, peak = dgcn_train(args, gather,
                                                           args.epochs)
            runs[side].append([s / batches for s in epoch_s])
            usage_runs[side].append(per_batch(usage, batches))
            if peak is not None:
                cache_mb[side].append(peak / 2**20)
        print(f'{pairing}: s/batch by epoch: dgcn-train '
              f'{fmt(runs["dgcn_train"][-1])}, '
              f'{"dgcn-train again" if control else "python"} '
              f'{fmt(runs["python"][-1])} ({" first, ".join(order)} '
              'second)', file=sys.stderr, flush=True)
    return runs, usage_runs, cache_mb


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', default='data/products.gcn')
    parser.add_argument('--bin', default='build/bin')
    parser.add_argument('--source', default='.',
                        help='the repository (for examples/gcn_ddp.py)')
    parser.add_argument('--ranks', type=int,
                        help='ranks a side (default: 2; with --side-by-side '
                        'at most half the CPUs)')
    parser.add_argument('--num-neighbors', default='15,10,5')
    parser.add_argument('--batch-size', type=int, default=1024,
                        help='seeds per batch and rank')
    parser.add_argument('--hidden', type=int, default=128)
    parser.add_argument('--threads', type=int, default=1,
                        help='torch threads per rank')
    parser.add_argument('--workers', type=int, default=1,
                        help='sampler threads per rank')
    parser.add_argument('--batches', type=int, default=0,
                        help='batches per rank (0: the whole epoch)')
    parser.add_argument('--epochs', type=int, default=2,
                        help='epochs per run: the first reported apart '
                        '(the process warm-up), the later ones pooled')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--pairings', default='read_store,gathered,pyg')
    parser.add_argument('--model', choices=['gcn', 'sage', 'gat'],
                        default='gcn',
                        help='the model of the pyg pairing (not gcn: that '
                        'pairing alone; examples/gcn_ddp.py is a GCN)')
    parser.add_argument('--heads', type=int, default=1,
                        help='--model gat: heads of every hidden layer '
                        '(--hidden counts features per head)')
    parser.add_argument('--launcher', choices=['torchrun', 'direct'],
                        default='torchrun',
                        help='how the Python ranks start (direct: plain '
                        'processes, as dgcn-train starts its ranks)')
    parser.add_argument('--settle', type=float, default=10.0,
                        help='seconds of idle before each run of the '
                        'read_store and gathered pairings (see above)')
    parser.add_argument('--side-by-side', action='store_true',
                        help='run the two sides of read_store and gathered '
                        'at the same time, each with --ranks ranks on its '
                        'own half of the CPUs (see above)')
    parser.add_argument('--pyg-batches', type=int, default=10,
                        help="batches per rank of PyG's own epoch")
    args = parser.parse_args()
    if args.model != 'gcn' and args.pairings != 'pyg':
        parser.error(f'--model {args.model} runs with --pairings pyg only '
                     '(examples/gcn_ddp.py is a GCN)')
    if args.heads != 1 and args.model != 'gat':
        parser.error('--heads is for --model gat')
    if args.epochs < 1:
        parser.error(f'--epochs {args.epochs}: at least 1')
    for pairing in args.pairings.split(','):
        if pairing not in ('read_store', 'gathered', 'control', 'pyg'):
            parser.error(f'--pairings: unknown pairing {pairing!r} (known: '
                         'read_store, gathered, control, pyg)')
    half = len(os.sched_getaffinity(0)) // 2
    if args.ranks is None:
        args.ranks = max(1, min(2, half)) if args.side_by_side else 2
    if args.side_by_side:
        if args.ranks > half:
            parser.error(f'--side-by-side: --ranks {args.ranks} needs as many '
                         f'CPUs a side; this machine gives each side {half} '
                         f'(try --ranks {max(half, 1)})')

    result = {'data': args.data, 'ranks': args.ranks,
              'num_neighbors': args.num_neighbors,
              'batch_size_per_rank': args.batch_size, 'hidden': args.hidden,
              'threads': args.threads, 'workers': args.workers,
              'batches': args.batches, 'epochs': args.epochs,
              'repeats': args.repeats,
              'launcher': args.launcher, 'model': args.model,
              'settle_s': args.settle, 'side_by_side': args.side_by_side,
              'heads': args.heads,
              'pyg_sampler': pyg_sampler()}
    for pairing in args.pairings.split(','):
        if pairing == 'pyg':
            if result['pyg_sampler'] is None:
                result['pyg'] = ("not run: torch_geometric's NeighborLoader "
                                 "needs pyg-lib or torch-sparse, and neither "
                                 "imports")
            else:
                result['pyg'] = pyg_pairing(args)
            continue
        control = pairing == 'control'
        if args.side_by_side:
            runs, usage_runs, cache_mb, placement = side_by_side_pairing(
                args, pairing)
        else:
            runs, usage_runs, cache_mb = sequential_pairing(args, pairing)
        if control:
            result[pairing] = {'note': "both sides are dgcn-train (as in "
                               "read_store): these ratios' spread is the "
                               "host's noise alone"}
        cpu_runs = usage_of(usage_runs, 'cpu_s')
        result.setdefault(pairing, {}).update({
            'first_epoch': compare(runs, slice(0, 1)),
            'first_epoch_cpu': compare(cpu_runs, slice(0, 1)),
            'first_epoch_usage': usage_medians(usage_runs, slice(0, 1)),
            'cpu_cache_peak_mb': {side: statistics.median(mb) if mb else None
                                  for side, mb in cache_mb.items()}})
        if args.epochs > 1:
            result[pairing]['later_epochs'] = compare(runs, slice(1, None))
            result[pairing]['later_epochs_cpu'] = compare(cpu_runs,
                                                          slice(1, None))
            result[pairing]['later_epochs_usage'] = usage_medians(
                usage_runs, slice(1, None))
        if args.side_by_side:
            result[pairing]['side_by_side'] = placement
    print(json.dumps(result, indent=1))


if __name__ == '__main__':
    main()
