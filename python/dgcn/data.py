"""Graph stores: open a ``.gcn`` file, convert to and from PyG ``Data``.

A :class:`Store` (``dgcn._C.Store``) holds the CSR graph, features, labels
and splits of ``graph/graph_store.h``. Its tensor properties (``x``,
``labels``, ``rowptr``, ``col``, ``degree``, ``train_index``, ...) share the
store's memory, which they keep alive; a store opened with ``mmap=True`` is
read-only memory, so do not write to its tensors.
"""
import errno
import os
from typing import Optional

import torch

from . import _C
from ._csr import target_of_entries

Store = _C.Store

__all__ = ['Store', 'Partition', 'open_store', 'open_partition', 'to_pyg',
           'from_pyg', 'read_npz', 'read_ogb', 'read_planetoid',
           'read_graphsaint']

Partition = _C.Partition


def _existing(path, what: str) -> str:
    # A path that is not there raises Python's FileNotFoundError (as open()
    # and torch.load do), naming it; what the C++ readers find wrong in
    # what is there is a RuntimeError in their words.
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT,
                                f'{what}: no such file or directory', path)
    return path


def open_store(path: str, mmap: bool = False, validate: bool = True,
               num_threads: int = 0,
               cache_dir: Optional[str] = None) -> Store:
    r"""Opens the ``.gcn`` store at :obj:`path` (made by ``dgcn-prep``).

    Args:
        path (str): the store file.
        mmap (bool, optional): map the file (or its expanded cache, written
            next to it, shared by every process of the machine) instead of
            reading it into private memory. With several ranks on a
            machine (``torchrun --nproc-per-node``), what ``dgcn-train
            --load auto`` does: one copy of the graph for all of them, and
            each rank opens it at once (products preset, 2 ranks of 1 thread:
            0.3-0.5 s against 13-14 s decoding a private copy each).
            (default: :obj:`False`)
        validate (bool, optional): check every invariant of the arrays.
            (default: :obj:`True`)
        num_threads (int, optional): threads to decode with; ``0``: every
            core. (default: :obj:`0`)
        cache_dir (str, optional): with :obj:`mmap`, the folder for the
            expanded cache of a compressed store, where the store's own
            folder cannot be written (``dgcn-train --cache-dir``).
            (default: :obj:`None`: next to the store)

    Raises:
        FileNotFoundError: no file at :obj:`path`.
        RuntimeError: the file is damaged or not a store (the message names
            the file and what is wrong, as ``dgcn-prep`` says), or
            :obj:`mmap` cannot write its cache.
        ValueError: :obj:`cache_dir` without :obj:`mmap`.
    """
    return Store.open(_existing(path, 'open_store'), mmap=mmap,
                      validate=validate, num_threads=num_threads,
                      cache_dir='' if cache_dir is None else str(cache_dir))


class _TorchCollectives:
    r"""A partitioned graph's exchanges (``partition/collectives.h``) over
    :mod:`torch.distributed`, on a Gloo group of their own (the sampler's
    all-to-alls never interleave with DDP's collectives)."""
    def __init__(self, group):
        self.group = group

    def exchange(self, payload: torch.Tensor, sizes: torch.Tensor):
        dist = torch.distributed
        recv_sizes = torch.empty_like(sizes)
        dist.all_to_all_single(recv_sizes, sizes, group=self.group)
        recv = torch.empty(int(recv_sizes.sum()), dtype=torch.uint8)
        dist.all_to_all_single(recv, payload, recv_sizes.tolist(),
                               sizes.tolist(), group=self.group)
        return recv, recv_sizes

    def sum(self, values: torch.Tensor) -> torch.Tensor:
        torch.distributed.all_reduce(values, group=self.group)
        return values

    def barrier(self):
        torch.distributed.barrier(group=self.group)


def open_partition(path: str, num_threads: int = 0) -> Partition:
    r"""This rank's part of the partitioned graph in folder :obj:`path`
    (``dgcn-prep partition``'s output; rank ``r`` holds part ``r``),
    opened by every rank together over :mod:`torch.distributed` (which must
    be initialized, with as many ranks as parts). A
    :class:`~dgcn.loader.NeighborLoader` over it samples batches equal to the
    whole graph's, asking the owners of other parts' nodes for their
    neighbours and rows.

    The result has :obj:`store` (the part), :obj:`num_nodes` and
    :obj:`num_edges` (of the whole graph), :obj:`parts` and
    :obj:`train_index` (every part's training nodes, whole-graph ids).

    Raises:
        RuntimeError: on every rank, naming each rank whose part is missing,
            damaged or foreign, or when the ranks are not as many as parts.
    """
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError("open_partition: torch.distributed is not "
                           "initialized; call init_process_group first "
                           "(one rank per part)")
    comm = _TorchCollectives(dist.new_group(backend='gloo'))
    return Partition(str(path), dist.get_rank(), dist.get_world_size(),
                     comm.exchange, comm.sum, comm.barrier, num_threads)


def read_npz(file: str, split: str = 'per-class:20,valid:500,test:1000',
             seed: int = 0, num_classes: int = 0,
             num_threads: int = 0) -> Store:
    r"""A gnn-benchmark ``.npz`` (``cora.npz``, ``citeseer.npz``, ...) as a
    store, split as ``dgcn-prep npz --split SPLIT --seed SEED`` splits it
    (the same store, digest for digest); ``store.save(path)`` writes it.

    Raises:
        ValueError: a malformed :obj:`split`.
        FileNotFoundError: no file at :obj:`file`.
        RuntimeError: the file is damaged (named, with what is wrong, in
            ``dgcn-prep``'s words).
    """
    return _C.read_npz(_existing(file, 'read_npz'), split, seed, num_classes,
                       num_threads)


def read_ogb(root: str, num_classes: int = 0, num_threads: int = 0) -> Store:
    r"""An OGB node-property folder (``ogbn-products``: ``raw/`` and
    ``split/``) as a store, as ``dgcn-prep ogb --root ROOT`` reads it
    (:class:`FileNotFoundError` where :obj:`root` is not there)."""
    return _C.read_ogb(_existing(root, 'read_ogb'), num_classes, num_threads)


def read_planetoid(root: str, name: str, num_threads: int = 0) -> Store:
    r"""Planetoid's files (``ind.cora.x``, ... under :obj:`root` or
    ``root/raw``) as a store, with Planetoid's public split, as
    ``dgcn-prep planetoid`` reads them (:class:`FileNotFoundError` where
    :obj:`root` is not there)."""
    return _C.read_planetoid(_existing(root, 'read_planetoid'), name,
                             num_threads)


def read_graphsaint(root: str, num_classes: int = 0,
                    num_threads: int = 0) -> Store:
    r"""A GraphSAINT / PyG ``AmazonProducts`` folder (``adj_full.npz``,
    ``feats.npy``, ``class_map.json``, ``role.json``) as a store, as
    ``dgcn-prep graphsaint`` reads it (:class:`FileNotFoundError` where
    :obj:`root` is not there)."""
    return _C.read_graphsaint(_existing(root, 'read_graphsaint'),
                              num_classes, num_threads)


def _labels(store: Store) -> Optional[torch.Tensor]:
    # int64 classes (-1 for unlabelled nodes) or float {0, 1} multi-label
    # rows, unpacked from the store's bit rows by the trainer's own rule.
    if store.task in ('single-label', 'multi-label'):
        return store.targets()
    return None


def _mask(index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    mask = torch.zeros(num_nodes, dtype=torch.bool)
    mask[index] = True
    return mask


def to_pyg(store: Store):
    r"""The store as a :class:`torch_geometric.data.Data` with :obj:`x`
    (shared, not copied), :obj:`y` (int64 classes, ``-1`` unlabelled; float
    ``[N, C]`` for multi-label), :obj:`edge_index` (``[2, E]``, row 0 the
    source: CSR row ``v`` lists the sources of ``v``'s edges) and
    :obj:`train_mask` / :obj:`val_mask` / :obj:`test_mask`."""
    from torch_geometric.data import Data

    n = store.num_nodes
    rowptr = store.rowptr
    target = target_of_entries(rowptr)
    edge_index = torch.stack([store.col.long(), target])
    data = Data(edge_index=edge_index, num_nodes=n)
    if store.num_features > 0:
        data.x = store.x
    y = _labels(store)
    if y is not None:
        data.y = y
    data.train_mask = _mask(store.train_index, n)
    data.val_mask = _mask(store.val_index, n)
    data.test_mask = _mask(store.test_index, n)
    return data


# PyG's habit: the dataset converts itself (``store.to_pyg()``).
Store.to_pyg = to_pyg


def _index(data, names) -> torch.Tensor:
    for name in names:
        mask = getattr(data, name, None)
        if mask is not None:
            if mask.dtype == torch.bool:
                return mask.nonzero().view(-1)
            return mask.long().view(-1)
    return torch.empty(0, dtype=torch.long)


def from_pyg(data, num_threads: int = 0) -> Store:
    r"""A store in memory from a PyG :class:`~torch_geometric.data.Data`.

    Edges ``edge_index[0] -> edge_index[1]`` become CSR rows of the targets
    (pass an undirected graph for a GCN: no edges are added); self-loops and
    repeated edges are dropped. :obj:`x` becomes float32 features, :obj:`y`
    (one class per node, ``[N]`` or ``[N, 1]``; ``-1``: unlabelled, other
    negative values raise :class:`ValueError`, the readers' rule) the
    labels, the masks (or index tensors)
    ``train_mask``/``val_mask``/``test_mask`` the splits.
    The result is checked like a file (``GraphStore::validate``); save it with
    :meth:`Store.save`.
    """
    num_nodes = data.num_nodes
    if num_nodes is None:
        raise ValueError('from_pyg: data has no nodes (num_nodes is None)')
    y = getattr(data, 'y', None)
    if isinstance(y, torch.Tensor) and y.dim() == 2 and y.size(1) == 1:
        y = y.view(-1)  # [N, 1]: one class per node, as OGB ships it
    return Store.from_tensors(
        int(num_nodes), data.edge_index, getattr(data, 'x', None), y,
        _index(data, ['train_mask', 'train_idx']),
        _index(data, ['val_mask', 'valid_mask', 'val_idx']),
        _index(data, ['test_mask', 'test_idx']), num_threads=num_threads)
