"""Test accuracy of GAT, GraphSAGE and GCN on Cora and Citeseer, full-batch,
with the setups of PyG's Planetoid examples (issue 33, "Measured").

The data: the gnn-benchmark ``.npz`` files (``--datasets-dir``, by default
``$DGCN_SHARED_DATASETS`` or ``../shared/datasets`` beside the clone) split
the Planetoid way, as the repo makes the "public split" of an npz
(``dgcn-prep npz --split per-class:20,valid:500,test:1000``, docs/formats.md):
20 training nodes per class, 500 validation, 1000 test, drawn with
``--split-seed``. The npz files carry no Planetoid node order, so these are
the public split's sizes, not its very nodes. Features are row-normalised
(PyG's ``NormalizeFeatures``), self-loops dropped (the layers add their own).

The models (2 layers, Adam, ``--epochs`` full-batch epochs, every seed from
``--seeds`` a fresh initialisation and dropout stream):

* ``gat``: PyG's examples/gat.py, the paper's Cora/Citeseer setup: dropout
  0.6 on the input, ``GATConv(in, 8, heads=8, dropout=0.6)``, ELU, dropout
  0.6, ``GATConv(64, classes, heads=1, concat=False, dropout=0.6)``; lr
  0.005, weight decay 5e-4.
* ``gcn``: PyG's examples/gcn.py: dropout 0.5, ``GCNConv(in, 16)``, ReLU,
  dropout 0.5, ``GCNConv(16, classes)``; lr 0.01, weight decay 5e-4 on the
  first layer only.
* ``sage-H``: the GCN recipe with ``SAGEConv`` (mean) and hidden ``H`` for
  each ``H`` of ``--sage-hidden``; weight decay 5e-4 on every parameter.

Model selection as PyG's examples: after every epoch, evaluate; the test
accuracy of the epoch with the best validation accuracy (strictly better
than every earlier one) is ``test_acc``; ``test_acc_final`` is the last
epoch's. ``--engine python`` trains ``dgcn.nn``'s layers; ``dgcn-train``
runs the same setups through ``build/bin/dgcn-train`` (``--num-neighbors
-1,-1``, one batch holding every training node) on a store ``dgcn-prep npz``
writes with the same split (the content digests are compared); ``pyg``
trains PyG's own ``GATConv``/``GCNConv``/``SAGEConv`` in the same model, on
the same data and split: the oracle, which tells a split harder than
Planetoid's from a layer that differs; ``both`` runs python and
dgcn-train, ``all`` the three. Prints one JSON object on stdout: per engine, dataset and model
the per-seed accuracies, their mean and sample standard deviation, and
seconds (training plus evaluation, per seed).

    python bench/planetoid_accuracy.py                       # python engine
    python bench/planetoid_accuracy.py --engine both --threads 2
    python bench/planetoid_accuracy.py --engine all --datasets citeseer --models gat,gcn
"""
import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
import torch_geometric.nn as pyg_nn

import dgcn
import dgcn.data
import dgcn.nn

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLIC_SPLIT = 'per-class:20,valid:500,test:1000'

# Each model's recipe: what the Python models below and the dgcn-train
# flags both read, so that the two engines train the same setup.
RECIPES = {
    'gat': dict(hidden=8, heads=8, dropout=0.6, attention_dropout=0.6,
                lr=0.005, weight_decay=5e-4, first_layer_only=False),
    'gcn': dict(hidden=16, heads=1, dropout=0.5, attention_dropout=0.0,
                lr=0.01, weight_decay=5e-4, first_layer_only=True),
    'sage': dict(heads=1, dropout=0.5, attention_dropout=0.0, lr=0.01,
                 weight_decay=5e-4, first_layer_only=False),
}


def recipe(model):
    kind, _, hidden = model.partition('-')
    r = dict(RECIPES[kind], kind=kind)
    if hidden:
        r['hidden'] = int(hidden)
    return r


class Net(torch.nn.Module):
    """Dropout, layer 1, ELU (GAT) or ReLU, dropout, layer 2."""

    def __init__(self, r, in_channels, classes, layers):
        super().__init__()
        self.r = r
        h, heads, kind = r['hidden'], r['heads'], r['kind']
        if kind == 'gat':
            self.conv1 = layers.GATConv(in_channels, h, heads=heads,
                                        dropout=r['attention_dropout'])
            self.conv2 = layers.GATConv(h * heads, classes, heads=1,
                                        concat=False,
                                        dropout=r['attention_dropout'])
        elif kind == 'gcn':
            self.conv1 = layers.GCNConv(in_channels, h, cached=True)
            self.conv2 = layers.GCNConv(h, classes, cached=True)
        else:
            self.conv1 = layers.SAGEConv(in_channels, h)
            self.conv2 = layers.SAGEConv(h, classes)

    def forward(self, x, edge_index):
        p = self.r['dropout']
        x = F.dropout(x, p=p, training=self.training)
        x = self.conv1(x, edge_index)
        x = F.elu(x) if self.r['kind'] == 'gat' else x.relu()
        x = F.dropout(x, p=p, training=self.training)
        return self.conv2(x, edge_index)


@contextlib.contextmanager
def stdout_to_stderr():
    # The readers' C++ log lines go to file descriptor 1; stdout must hold
    # only the JSON object.
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def load(path, split, split_seed):
    with stdout_to_stderr():
        store = dgcn.data.read_npz(path, split=split, seed=split_seed)
    data = store.to_pyg()
    keep = data.edge_index[0] != data.edge_index[1]
    data.edge_index = data.edge_index[:, keep]
    x = data.x - data.x.min()  # PyG's NormalizeFeatures
    data.x = x / x.sum(-1, keepdim=True).clamp(min=1)
    return store, data


def train_python(data, classes, model, seed, epochs, layers):
    r = recipe(model)
    torch.manual_seed(seed)
    net = Net(r, data.num_features, classes, layers)
    wd = r['weight_decay']
    if r['first_layer_only']:
        groups = [dict(params=net.conv1.parameters(), weight_decay=wd),
                  dict(params=net.conv2.parameters(), weight_decay=0.0)]
    else:
        groups = [dict(params=net.parameters(), weight_decay=wd)]
    opt = torch.optim.Adam(groups, lr=r['lr'])
    x, ei, y = data.x, data.edge_index, data.y
    masks = (data.train_mask, data.val_mask, data.test_mask)
    best_valid = selected = final = 0.0
    for _ in range(epochs):
        net.train()
        opt.zero_grad()
        out = net(x, ei)
        F.cross_entropy(out[data.train_mask], y[data.train_mask]).backward()
        opt.step()
        net.eval()
        with torch.no_grad():
            pred = net(x, ei).argmax(-1)
        _, valid, test = (float((pred[m] == y[m]).float().mean())
                          for m in masks)
        if valid > best_valid:
            best_valid, selected = valid, test
        final = test
    return selected, final


def train_cli(binary, store_path, model, seed, epochs, threads, workdir):
    r = recipe(model)
    cmd = [binary, '--data', store_path, '--model', r['kind'],
           '--hidden', str(r['hidden']), '--num-neighbors', '-1,-1',
           '--batch-size', str(1 << 30), '--epochs', str(epochs),
           '--lr', str(r['lr']), '--weight-decay', str(r['weight_decay']),
           '--dropout', str(r['dropout']), '--input-dropout',
           str(r['dropout']), '--normalize-features', '--seed', str(seed),
           '--threads', str(threads)]
    if r['kind'] == 'gat':
        cmd += ['--heads', str(r['heads']), '--attention-dropout',
                str(r['attention_dropout'])]
    if r['first_layer_only']:
        cmd.append('--weight-decay-first-layer-only')
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({run.returncode}):\n"
                           f"{run.stderr[-2000:]}")
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    return (summary['test_acc_at_best_valid'], summary['test_acc'],
            summary['config']['data']['digest'])


def summarise(runs, seeds, seconds):
    sel = [round(a, 4) for a, _ in runs]
    fin = [round(b, 4) for _, b in runs]
    return {'seeds': seeds, 'test_acc': sel,
            'mean': round(statistics.mean(sel), 4),
            'std': round(statistics.stdev(sel), 4) if len(sel) > 1 else 0.0,
            'test_acc_final': fin,
            'mean_final': round(statistics.mean(fin), 4),
            'seconds': seconds}


def csv(kind):
    def parse(text):
        items = [kind(t) for t in text.split(',') if t]
        if not items:
            raise argparse.ArgumentTypeError('an empty list')
        return items
    return parse


def main():
    shared = os.environ.get('DGCN_SHARED_DATASETS',
                            os.path.join(os.path.dirname(REPO), 'shared',
                                         'datasets'))
    p = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument('--datasets-dir', default=shared,
                   help='folder of cora.npz, citeseer.npz')
    p.add_argument('--datasets', type=csv(str), default='cora,citeseer',
                   help='names of npz files in --datasets-dir')
    p.add_argument('--models', type=csv(str), default='gat,gcn,sage',
                   help='gat, gcn, sage (one entry per --sage-hidden)')
    p.add_argument('--sage-hidden', type=csv(int), default='16,64',
                   help='hidden widths of the sage entries')
    p.add_argument('--seeds', type=csv(int), default='0,1,2',
                   help='weight and dropout seeds, one run each')
    p.add_argument('--epochs', type=int, default=200,
                   help='full-batch epochs per run')
    p.add_argument('--split', default=PUBLIC_SPLIT,
                   help="dgcn-prep npz's --split")
    p.add_argument('--split-seed', type=int, default=0,
                   help="dgcn-prep npz's --seed")
    p.add_argument('--threads', type=int, default=1,
                   help='torch threads (python) and dgcn-train --threads')
    p.add_argument('--engine', choices=('python', 'pyg', 'dgcn-train',
                                        'both', 'all'),
                   default='python',
                   help="dgcn.nn layers, PyG's own layers (the oracle: "
                        "same data, split and recipe), dgcn-train, both "
                        "(python and dgcn-train) or all three")
    p.add_argument('--bin-dir', default=os.path.join(REPO, 'build', 'bin'),
                   help='where dgcn-train and dgcn-prep are')
    args = p.parse_args()
    if args.epochs < 1:
        p.error(f'--epochs {args.epochs}: must be at least 1')
    if args.threads < 1:
        p.error(f'--threads {args.threads}: must be at least 1')
    models = []
    for m in args.models:
        if m not in RECIPES:
            p.error(f"--models: unknown model '{m}' (gat, gcn, sage)")
        models += [f'sage-{h}' for h in args.sage_hidden] if m == 'sage' \
            else [m]
    engines = {'both': ['python', 'dgcn-train'],
               'all': ['python', 'pyg', 'dgcn-train']}.get(args.engine,
                                                          [args.engine])
    files = {d: os.path.join(args.datasets_dir, f'{d}.npz')
             for d in args.datasets}
    for d, f in files.items():
        if not os.path.isfile(f):
            p.error(f'--datasets {d}: no file {f} (see --datasets-dir)')
    binaries = {b: os.path.join(args.bin_dir, b)
                for b in ('dgcn-train', 'dgcn-prep')}
    if 'dgcn-train' in engines:
        for b in binaries.values():
            if not os.access(b, os.X_OK):
                p.error(f'--engine dgcn-train: no executable {b} '
                        '(build it, or see --bin-dir)')
    torch.set_num_threads(args.threads)

    result = {'split': args.split, 'split_seed': args.split_seed,
              'epochs': args.epochs, 'threads': args.threads,
              'selection': 'test_acc: at the best validation epoch (PyG '
                           'examples); test_acc_final: the last epoch',
              'std': 'sample (n-1)', 'version': dgcn.__version__,
              'results': {e: {} for e in engines}}
    workdir = tempfile.mkdtemp(prefix='planetoid_accuracy.')
    try:
        for d, f in files.items():
            store, data = load(f, args.split, args.split_seed)
            classes = int(data.y.max()) + 1
            digest = store.content_digest()
            store_path = os.path.join(workdir, f'{d}.gcn')
            if 'dgcn-train' in engines:
                subprocess.run([binaries['dgcn-prep'], 'npz', '--file', f,
                                '--split', args.split, '--seed',
                                str(args.split_seed), '--out', store_path],
                               check=True, capture_output=True)
            for e in engines:
                out = result['results'][e].setdefault(d, {})
                for m in models:
                    runs, seconds = [], []
                    for s in args.seeds:
                        t = time.perf_counter()
                        if e in ('python', 'pyg'):
                            runs.append(train_python(
                                data, classes, m, s, args.epochs,
                                dgcn.nn if e == 'python' else pyg_nn))
                        else:
                            sel, fin, cli_digest = train_cli(
                                binaries['dgcn-train'], store_path, m, s,
                                args.epochs, args.threads, workdir)
                            if cli_digest != digest:
                                raise RuntimeError(
                                    f'{d}: dgcn-prep wrote a store of digest '
                                    f'{cli_digest}, read_npz {digest}: not '
                                    'the same split')
                            runs.append((sel, fin))
                        seconds.append(round(time.perf_counter() - t, 3))
                        print(f'{e} {d} {m} seed {s}: test {runs[-1][0]:.3f}'
                              f' (final {runs[-1][1]:.3f}) {seconds[-1]} s',
                              file=sys.stderr, flush=True)
                    out[m] = summarise(runs, args.seeds, seconds)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(result))


if __name__ == '__main__':
    main()
