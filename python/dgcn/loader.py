"""``NeighborLoader``: PyG's mini-batch loader on dgcn's C++ sampler threads."""
from typing import Optional, Sequence

import torch

from . import _C
from .data import Partition, Store, _labels, from_pyg

__all__ = ['NeighborLoader']


def _dist_rank_world():
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class NeighborLoader:
    r"""Samples mini-batches of :obj:`data` like
    :class:`torch_geometric.loader.NeighborLoader`, on C++ worker threads
    that run ahead of the training loop (``sampling/loader.h``).

    Each batch is a :class:`~torch_geometric.data.Data` with PyG's fields:
    :obj:`n_id` (global ids of the sampled nodes, the
    :obj:`batch_size` seeds first), :obj:`edge_index` (local ids, row 0 the
    sampled neighbour, row 1 the node it was sampled for),
    :obj:`num_sampled_nodes` / :obj:`num_sampled_edges` (per hop), :obj:`x`
    and :obj:`y` sliced by :obj:`n_id`, and :obj:`deg` (each node's degree in
    the full graph, for :class:`dgcn.nn.GCNConv`'s unbiased normalization).

    With several processes the seeds are split per rank as
    :class:`~torch.utils.data.DistributedSampler` does (padding, equal batch
    counts on every rank), and batch ``b`` of an epoch depends only on
    (:obj:`seed`, epoch, ``b``, rank): not on :obj:`num_workers` or timing.

    Args:
        data (Store, Partition or torch_geometric.data.Data): the graph. A
            ``Data`` is converted once (:func:`dgcn.data.from_pyg`). A
            :class:`~dgcn.data.Partition` (:func:`dgcn.data.open_partition`)
            samples with the other ranks, one per part, over their own Gloo
            group: the batches equal the whole graph's, and :obj:`y` holds
            the seeds' labels (``-1`` for the other nodes, whose labels
            other parts hold); one worker.
        num_neighbors (List[int]): neighbours sampled per node at each hop,
            hop 0 first; ``-1`` takes all of them.
        batch_size (int, optional): seeds per batch. (default: :obj:`1024`)
        input_nodes (Tensor, optional): the seeds, as node ids or a boolean
            mask; ``None``: every node. (default: :obj:`None`)
        shuffle (bool, optional): shuffle the seeds every epoch.
            (default: :obj:`True`)
        seed (int, optional): the seed of every random choice.
            (default: :obj:`0`)
        num_workers (int, optional): C++ threads sampling batches side by
            side. (default: :obj:`2`)
        rank (int, optional): this process's rank; default: from
            :mod:`torch.distributed` when initialized, else ``0``.
        world_size (int, optional): the number of ranks, likewise.
        replace (bool, optional): sample with replacement.
            (default: :obj:`False`)
        drop_last (bool, optional): drop every rank's last partial batch.
            (default: :obj:`False`)
        prefetch (int, optional): batches sampled ahead. (default: :obj:`4`)
        gather_features (bool, optional): copy the sampled nodes' feature
            rows into every batch's :obj:`x`. :obj:`False`: :obj:`x` is
            :obj:`None`, and the first :class:`dgcn.nn.GCNConv` reads the
            rows itself from the store (``conv(store.x, ..., n_id=n_id)``),
            as ``dgcn-train`` does on the CPU: less memory traffic.
            (default: :obj:`True`)

    Epochs count from 0 and advance by one with every iteration;
    :meth:`set_epoch` sets the next one (as with ``DistributedSampler``). A
    new iteration abandons an unfinished one.
    """
    def __init__(
        self,
        data,
        num_neighbors: Sequence[int] = (15, 10, 5),
        batch_size: int = 1024,
        input_nodes: Optional[torch.Tensor] = None,
        shuffle: bool = True,
        seed: int = 0,
        num_workers: int = 2,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        replace: bool = False,
        drop_last: bool = False,
        prefetch: int = 4,
        gather_features: bool = True,
    ):
        self.partition = data if isinstance(data, Partition) else None
        if self.partition is not None:
            # Labels come with each batch, for its seeds (the part holds no
            # other node's).
            self.store = data.store
            self._y = None
            self._x = None
        elif isinstance(data, Store):
            self.store = data
            self._y = _labels(data)
            self._x = None
        else:
            self.store = from_pyg(data)
            self._y = getattr(data, 'y', None)
            self._x = None if self.store.num_features > 0 else getattr(
                data, 'x', None)
        if not gather_features:
            self._x = None
        if isinstance(num_neighbors, (int, str)) or not all(
                isinstance(k, int) for k in num_neighbors):
            raise ValueError(
                f"NeighborLoader: num_neighbors = {num_neighbors!r}; expected "
                f"a list of integers >= -1, one per layer, e.g. [15, 10, 5]")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"NeighborLoader: batch_size = {batch_size!r}, "
                             f"expected an integer >= 1")
        default_rank, default_world = _dist_rank_world()
        self.rank = default_rank if rank is None else int(rank)
        self.world_size = (default_world
                           if world_size is None else int(world_size))
        self.num_neighbors = list(num_neighbors)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.input_nodes = self._seeds(input_nodes)
        if self.partition is not None:
            if (self.rank, self.world_size) != (self.partition.store.part_index,
                                                self.partition.parts):
                raise ValueError(
                    f"NeighborLoader: rank {self.rank} of {self.world_size} "
                    f"cannot sample part {self.partition.store.part_index} of "
                    f"{self.partition.parts}: one rank per part")
            self._loader = _C.Loader(self.partition, self.num_neighbors,
                                     replace=replace, queue_depth=prefetch,
                                     gather_features=gather_features)
        else:
            self._loader = _C.Loader(self.store, self.num_neighbors,
                                     replace=replace, num_workers=num_workers,
                                     queue_depth=prefetch,
                                     gather_features=gather_features)
        self._epoch = 0
        self._len = None

    def _seeds(self, input_nodes) -> torch.Tensor:
        n = (self.store.num_nodes if self.partition is None else
             self.partition.num_nodes)
        if input_nodes is None:
            return torch.arange(n)
        if not isinstance(input_nodes, torch.Tensor):
            input_nodes = torch.as_tensor(input_nodes)
        if input_nodes.dtype == torch.bool:
            if input_nodes.numel() != n:
                raise ValueError(
                    f"NeighborLoader: input_nodes is a mask of "
                    f"{input_nodes.numel()} entries for {n} nodes")
            return input_nodes.nonzero().view(-1)
        if input_nodes.is_floating_point() or input_nodes.is_complex():
            raise ValueError(f"NeighborLoader: input_nodes must hold integer "
                             f"node ids (got {input_nodes.dtype})")
        ids = input_nodes.view(-1).long()
        bad = ((ids < 0) | (ids >= n)).nonzero()
        if bad.numel() > 0:
            i = int(bad[0])
            raise ValueError(f"NeighborLoader: input_nodes[{i}] = {int(ids[i])}"
                             f" is not a node id in [0, {n})")
        return ids

    def set_epoch(self, epoch: int):
        r"""Makes the next iteration epoch :obj:`epoch`."""
        self._epoch = int(epoch)

    def __len__(self) -> int:
        if self._len is None:
            self._len = len(
                _C.plan_epoch(self.input_nodes, self.seed, 0, self.rank,
                              self.world_size, self.batch_size, False,
                              self.drop_last))
        return self._len

    def __iter__(self):
        epoch = self._epoch
        self._epoch += 1
        self._loader.start_epoch(self.input_nodes, self.seed, epoch, self.rank,
                                 self.world_size, self.batch_size,
                                 self.shuffle, self.drop_last)
        return _Iterator(self, epoch)


class _Iterator:
    def __init__(self, loader: NeighborLoader, epoch: int):
        self.loader = loader
        self.epoch = epoch

    def __iter__(self):
        return self

    def __next__(self):
        from torch_geometric.data import Data

        out = self.loader._loader.next()
        if out is None:
            raise StopIteration
        n_id, edge_index, x, deg, batch_size, nodes, edges, seed_y = out
        if x is None and self.loader._x is not None:
            x = self.loader._x[n_id]
        batch = Data(x=x, edge_index=edge_index, n_id=n_id,
                     num_nodes=n_id.numel())
        if self.loader._y is not None:
            batch.y = self.loader._y[n_id]
        elif seed_y is not None:  # a partition's: the seeds' labels, -1 after
            batch.y = torch.full((n_id.numel(), ), -1, dtype=torch.long)
            batch.y[:batch_size] = seed_y
        batch.deg = deg
        batch.batch_size = batch_size
        batch.num_sampled_nodes = nodes
        batch.num_sampled_edges = edges
        batch.epoch = self.epoch
        return batch

