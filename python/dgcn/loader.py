"""``NeighborLoader``: PyG's mini-batch loader on dgcn's C++ sampler threads."""
from typing import Callable, Optional, Sequence

import torch

from . import _C
from ._edge_ids import EdgeIds
from .data import Partition, Store, _labels, _mask, from_pyg
from .nn import _csc_edge_index, _NormCache

__all__ = ['NeighborLoader']


_SPLIT_MASKS = ('train_mask', 'val_mask', 'test_mask')  # a store's splits


def _dist_rank_world():
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


# PyG's NeighborLoader / DataLoader arguments that dgcn accepts only with
# one value (PyG's default), or ignores because they change nothing here:
# name -> (accepted(value), what dgcn offers instead). Anything else raises
# NotImplementedError naming the argument: never a TypeError for a PyG
# argument, never silently different batches.
_PYG_ONLY_DEFAULT = {
    'input_time': (lambda v: v is None, 'no temporal sampling'),
    'subgraph_type': (lambda v: str(getattr(v, 'value', v)) == 'directional',
                      "only subgraph_type='directional'"),
    'disjoint': (lambda v: not v, 'only disjoint=False'),
    'temporal_strategy': (lambda v: v == 'uniform', 'no temporal sampling'),
    'time_attr': (lambda v: v is None, 'no temporal sampling'),
    'weight_attr': (lambda v: v is None, 'uniform sampling only'),
    'transform_sampler_output': (lambda v: v is None,
                                 'transform= on the batch'),
    'neighbor_sampler': (lambda v: v is None, "dgcn's C++ sampler"),
    'directed': (lambda v: bool(v), 'only directed=True'),
    'collate_fn': (lambda v: v is None, 'transform= on the batch'),
    'sampler': (lambda v: v is None, 'input_nodes= and shuffle='),
    'batch_sampler': (lambda v: v is None, 'input_nodes= and batch_size='),
    'generator': (lambda v: v is None, 'seed= (and set_epoch)'),
    'worker_init_fn': (lambda v: v is None, 'C++ sampler threads'),
    'multiprocessing_context': (lambda v: v is None, 'C++ sampler threads'),
    'timeout': (lambda v: not v, 'no timeout'),
    'pin_memory_device': (lambda v: not v, 'pin_memory=True'),
}
# Accepted whatever their value: hints about work dgcn does differently
# (sorted CSR, filtering in the sampler threads, workers that persist,
# batches in order).
_PYG_IGNORED = ('is_sorted', 'filter_per_worker', 'persistent_workers',
                'in_order')


class NeighborLoader:
    r"""Samples mini-batches of :obj:`data` like
    :class:`torch_geometric.loader.NeighborLoader` (same arguments, same
    defaults, same batch fields), on C++ worker threads that run ahead of
    the training loop (``sampling/loader.h``).

    Each batch is a :class:`~torch_geometric.data.Data` with PyG's fields:
    :obj:`n_id` (global ids of the sampled nodes, the :obj:`batch_size`
    seeds first), :obj:`input_id` (the seeds' positions in
    :obj:`input_nodes`), :obj:`batch_size`, :obj:`edge_index` (local ids,
    row 0 the sampled neighbour, row 1 the node it was sampled for),
    :obj:`num_sampled_nodes` / :obj:`num_sampled_edges` (per hop), :obj:`x`,
    :obj:`y` and every other node-level attribute of the input (a ``Data``'s
    ``train_mask``, ...; a store's ``train_mask`` / ``val_mask`` /
    ``test_mask``) sliced by :obj:`n_id`, graph-level attributes as they
    are, :obj:`e_id` (each sampled edge's column of the input ``Data``'s
    ``edge_index``, of a store its CSR position; see :obj:`edge_ids`) with
    the ``Data``'s edge-level attributes (``edge_attr``, ...) sliced by it,
    and dgcn's :obj:`deg` (each node's degree in the full graph, for
    :class:`dgcn.nn.GCNConv`'s unbiased normalization).

    Each :func:`iter` is independent: two live iterators never share a
    stream (``zip(loader, loader)`` and nested loops work), each its own
    epoch. With several processes the seeds are split per rank as
    :class:`~torch.utils.data.DistributedSampler` does (padding, equal batch
    counts on every rank), and batch ``b`` of an epoch depends only on
    (:obj:`seed`, epoch, ``b``, rank): not on :obj:`num_workers` or timing.

    Args (PyG's, with PyG's defaults):
        data (Store, Partition or torch_geometric.data.Data): the graph,
            kept as :obj:`loader.data`. A ``Data`` is converted once
            (:func:`dgcn.data.from_pyg`); as in PyG, its attributes are
            sliced as they are when an iteration starts, so PyG's examples'
            ``del loader.data.x, loader.data.y`` and ``loader.data.n_id =
            torch.arange(N)`` work (an :obj:`x` replaced after the loader
            was built is read in Python instead of the converted rows). A
            :class:`~dgcn.data.Partition` (:func:`dgcn.data.open_partition`)
            samples with the other ranks, one per part, over their own Gloo
            group: the batches equal the whole graph's, and :obj:`y` holds
            the seeds' labels (``-1`` for the other nodes, whose labels
            other parts hold); one worker, one live iterator at a time.
        num_neighbors (List[int]): neighbours sampled per node at each hop,
            hop 0 first; ``-1`` takes all of them.
        input_nodes (Tensor, optional): the seeds, as node ids or a boolean
            mask; ``None``: every node. (default: :obj:`None`)
        replace (bool, optional): sample with replacement.
            (default: :obj:`False`)
        transform (callable, optional): applied to every batch.
        batch_size (int, optional): seeds per batch. (default: :obj:`1`)
        shuffle (bool, optional): shuffle the seeds every epoch.
            (default: :obj:`False`)
        drop_last (bool, optional): drop every rank's last partial batch.
            (default: :obj:`False`)
        num_workers (int, optional): C++ threads sampling batches side by
            side; ``0`` (PyG's default: no worker processes) runs one
            thread, whose batches are the same. (default: :obj:`0`)
        pin_memory (bool, optional): page-locked batches where CUDA is
            available (ignored elsewhere, as PyTorch's DataLoader does).
        prefetch_factor (int, optional): batches sampled ahead per worker.

    PyG's other arguments are accepted with their default value (or, for
    ``is_sorted``, ``filter_per_worker``, ``persistent_workers`` and
    ``in_order``, any value: they change nothing here); any other value
    raises :class:`NotImplementedError` naming the argument.

    dgcn's own, keyword-only:
        seed (int, optional): the seed of every random choice.
            (default: :obj:`0`)
        rank (int, optional): this process's rank; default: from
            :mod:`torch.distributed` when initialized, else ``0``.
        world_size (int, optional): the number of ranks, likewise.
        prefetch (int, optional): batches sampled ahead (overrides
            :obj:`prefetch_factor`). (default: :obj:`4`)
        gather_features (bool, optional): copy the sampled nodes' feature
            rows into every batch's :obj:`x`. :obj:`False`: :obj:`x` is
            :obj:`None`, and the first :class:`dgcn.nn.GCNConv` reads the
            rows itself from the store (``conv(store.x, ..., n_id=n_id)``),
            as ``dgcn-train`` does on the CPU: less memory traffic.
            (default: :obj:`True`)
        edge_ids (bool, optional): give batches :obj:`e_id`. For a
            ``Data``, one ``searchsorted`` of the batch's edges in the
            data's (about 0.2 s per million sampled edges on a busy 2-core
            machine); for a store, a binary search per edge in its node's
            CSR row (torch ops, about 1.2 s per million: as much as
            sampling a products batch). Default: for a ``Data`` (PyG's
            batches have it), not for a store; a partition has none.
            (default: :obj:`None`)

    Epochs count from 0 and advance by one with every iteration;
    :meth:`set_epoch` sets the next one (as with ``DistributedSampler``).
    """
    def __init__(
        self,
        data,
        num_neighbors: Sequence[int],
        input_nodes: Optional[torch.Tensor] = None,
        input_time=None,
        replace: bool = False,
        subgraph_type='directional',
        disjoint: bool = False,
        temporal_strategy: str = 'uniform',
        time_attr=None,
        weight_attr=None,
        transform: Optional[Callable] = None,
        transform_sampler_output=None,
        is_sorted: bool = False,
        filter_per_worker=None,
        neighbor_sampler=None,
        directed: bool = True,
        *,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        num_workers: int = 0,
        pin_memory: bool = False,
        prefetch_factor: Optional[int] = None,
        seed: int = 0,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        prefetch: Optional[int] = None,
        gather_features: bool = True,
        edge_ids: Optional[bool] = None,
        **kwargs,
    ):
        given = dict(input_time=input_time, subgraph_type=subgraph_type,
                     disjoint=disjoint, temporal_strategy=temporal_strategy,
                     time_attr=time_attr, weight_attr=weight_attr,
                     transform_sampler_output=transform_sampler_output,
                     neighbor_sampler=neighbor_sampler, directed=directed)
        for key, value in kwargs.items():
            if key not in _PYG_ONLY_DEFAULT and key not in _PYG_IGNORED:
                raise TypeError(f"NeighborLoader: unexpected keyword "
                                f"argument {key!r} (neither PyG's nor "
                                f"dgcn's)")
            given[key] = value
        for key, value in given.items():
            if key in _PYG_ONLY_DEFAULT:
                accepted, instead = _PYG_ONLY_DEFAULT[key]
                if not accepted(value):
                    raise NotImplementedError(
                        f"NeighborLoader: {key}={value!r} is not supported "
                        f"by dgcn ({instead})")
        # Batches are PyG's Data with an EdgeIndex: import PyG now, where
        # the loader is built (as a PyG user's `from torch_geometric.loader
        # import NeighborLoader` does), not in the first batch, where its
        # ~1.3 s import stalled the training loop (on 2 ranks of a 2-core
        # machine, all of the first epoch's extra time over dgcn-train's).
        import torch_geometric  # noqa: F401
        if transform is not None and not callable(transform):
            raise TypeError(f"NeighborLoader: transform = {transform!r} is "
                            f"not callable")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"NeighborLoader: num_workers = "
                             f"{num_workers!r}; expected an integer >= 0")
        if prefetch is None:
            factor = 2 if prefetch_factor is None else prefetch_factor
            if not isinstance(factor, int) or factor < 1:
                raise ValueError(f"NeighborLoader: prefetch_factor = "
                                 f"{prefetch_factor!r}; expected an integer "
                                 f">= 1")
            prefetch = max(4, factor * max(num_workers, 1))
        self.transform = transform
        self.pin_memory = bool(pin_memory) and torch.cuda.is_available()
        self.partition = data if isinstance(data, Partition) else None
        # As PyG's `loader.data`: the graph given, whose attributes a Data's
        # batches slice as they are when an iteration starts.
        self.data = data
        self._store_x = None  # the x a Data's store was built from
        # Node-level attributes of the input other than x and y, sliced by
        # n_id into every batch; graph-level ones copied as they are.
        self._node_attrs = {}
        self._graph_attrs = {}
        self._edge_attrs = {}  # name: (tensor, PyG's dimension of edges)
        # A store's train/val/test masks as bits of one byte per node.
        self._split_bits = None
        # A store's degrees, classes and split bits in one table, which the
        # C++ loader reads once per sampled node for batch.deg, batch.y (int64,
        # as PyG's) and the split masks (sampling/node_facts.h).
        self._node_facts = None
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
            n = data.num_nodes
            bits = torch.zeros(n, dtype=torch.uint8)
            for bit, index in enumerate((data.train_index, data.val_index,
                                         data.test_index)):
                bits |= _mask(index, n).to(torch.uint8) << bit
            self._split_bits = bits
            if self._y is not None and self._y.dtype == torch.int64 and (
                    self._y.dim() == 1) and (self._y.numel() == 0 or
                    (int(self._y.min()) >= -1 and
                     int(self._y.max()) <= _C.NodeFacts.max_class)):
                self._node_facts = _C.NodeFacts(data, self._y.int(), bits)
                # The batches' y and masks come from the facts: the labels'
                # freed pages serve the first batches' index arrays (Note
                # [Index memory] in python/src/loader.h).
                self._y = self._split_bits = None
        else:
            self.store = from_pyg(data)
            self._store_x = getattr(data, 'x', None)
        # e_id: CSR positions in a store, columns of a Data's edge_index;
        # none for a part of a partitioned graph (its positions are local).
        if edge_ids is None:
            edge_ids = not isinstance(data, (Store, Partition))
        if edge_ids and self.partition is not None:
            raise NotImplementedError(
                "NeighborLoader: edge_ids=True over a partition (a part's "
                "CSR positions are its own); use edge_ids=False")
        self._edge_ids = EdgeIds(
            self.store, None if isinstance(data, Store) else
            data) if edge_ids else None
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
        self.shuffle = bool(shuffle)
        self.seed = seed
        self.drop_last = drop_last
        self.num_workers = num_workers
        self._replace = replace
        self._prefetch = prefetch
        self._gather_asked = gather_features
        self._gather = gather_features
        if not isinstance(data, (Store, Partition)):
            self._follow_data()
        self.input_nodes = self._seeds(input_nodes)
        if self.partition is not None:
            if (self.rank, self.world_size) != (self.partition.store.part_index,
                                                self.partition.parts):
                raise ValueError(
                    f"NeighborLoader: rank {self.rank} of {self.world_size} "
                    f"cannot sample part {self.partition.store.part_index} of "
                    f"{self.partition.parts}: one rank per part")
        # Idle C++ loaders: an iterator takes one (or makes one) and gives
        # it back when it ends, so live iterators never share a stream.
        self._idle = [self._new_loader()]
        self._live_partition_iterator = None
        self._epoch = 0
        self._len = None

    def _follow_data(self):
        # PyG slices `loader.data`'s attributes into each batch as it makes
        # it, so one deleted, added or replaced after the loader was built
        # counts: PyG's inference pattern deletes x and y from its subgraph
        # loader's data and adds n_id. Read again at every iteration.
        data = self.data
        self._node_attrs, self._graph_attrs, self._edge_attrs = {}, {}, {}
        self._split_attributes(data)
        self._y = getattr(data, 'y', None)
        x = getattr(data, 'x', None) if self._gather_asked else None
        # The store holds the rows of the x it was built from, which the
        # C++ loader gathers; any other x is sliced in Python.
        in_store = (x is not None and x is self._store_x
                    and self.store.num_features > 0)
        self._x = None if in_store else x
        if in_store != self._gather:
            self._gather = in_store
            self._idle = []  # loaders that gather (or not) as before

    def _split_attributes(self, data):
        skip = {'x', 'y', 'edge_index', 'num_nodes', 'adj', 'adj_t'}
        for key in data.keys():
            if key in skip:
                continue
            value = data[key]
            if data.is_node_attr(key) and isinstance(value, torch.Tensor):
                self._node_attrs[key] = value
            elif data.is_edge_attr(key) and isinstance(value, torch.Tensor):
                self._edge_attrs[key] = (value, data.__cat_dim__(key, value))
            elif not data.is_edge_attr(key):
                self._graph_attrs[key] = value

    def _new_loader(self):
        if self.partition is not None:
            return _C.Loader(self.partition, self.num_neighbors,
                             replace=self._replace, queue_depth=self._prefetch,
                             gather_features=self._gather)
        cpp = _C.Loader(self.store, self.num_neighbors, replace=self._replace,
                        num_workers=max(self.num_workers, 1),
                        queue_depth=self._prefetch,
                        gather_features=self._gather)
        if self._node_facts is not None:
            cpp.set_node_facts(self._node_facts)
        return cpp

    def _seeds(self, input_nodes) -> torch.Tensor:
        n = (self.store.num_nodes if self.partition is None else
             self.partition.num_nodes)
        if input_nodes is None:
            return torch.arange(n)
        if isinstance(input_nodes, (tuple, str)):
            raise NotImplementedError(
                f"NeighborLoader: input_nodes = {input_nodes!r}: "
                f"heterogeneous graphs are not supported")
        if not isinstance(input_nodes, torch.Tensor):
            input_nodes = torch.as_tensor(input_nodes)
        if input_nodes.dtype == torch.bool:
            if input_nodes.numel() != n:
                raise ValueError(
                    f"NeighborLoader: input_nodes is a mask of "
                    f"{input_nodes.numel()} entries for {n} nodes")
            return input_nodes.view(-1).nonzero().view(-1).cpu()
        if input_nodes.is_floating_point() or input_nodes.is_complex():
            raise ValueError(f"NeighborLoader: input_nodes must hold integer "
                             f"node ids (got {input_nodes.dtype})")
        ids = input_nodes.reshape(-1).long().cpu()
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
        if self.partition is not None:
            # One loader: its exchanges with the other ranks run in plan
            # order. A new iteration ends the previous one, loudly.
            loader = self._idle[0]
            if self._live_partition_iterator is not None:
                self._live_partition_iterator.stale = True
        else:
            if not isinstance(self.data, Store):
                self._follow_data()
            loader = self._idle.pop() if self._idle else self._new_loader()
        loader.start_epoch(self.input_nodes, self.seed, epoch, self.rank,
                           self.world_size, self.batch_size, self.shuffle,
                           self.drop_last)
        it = _Iterator(self, loader, epoch)
        if self.partition is not None:
            self._live_partition_iterator = it
        return it

    def _give_back(self, loader, gather):
        if (self.partition is None and gather == self._gather
                and len(self._idle) < 2):
            self._idle.append(loader)

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}()'


def _block_edge_index(edge_index, colptr, num_nodes):
    # The sampled block as PyG's EdgeIndex sorted by target, its CSC cache
    # filled with the block's own pointer: dgcn's GCNConv normalizes it
    # without sorting the edges again, once per batch (nn._NormCache), and
    # PyG's layers take it as they take any edge_index.
    return _csc_edge_index(edge_index, colptr, (num_nodes, num_nodes),
                           _NormCache())


class _Iterator:
    def __init__(self, loader: NeighborLoader, cpp_loader, epoch: int):
        self.loader = loader
        self.cpp = cpp_loader
        self.epoch = epoch
        self.gather = loader._gather  # what its C++ loader gathers
        self.stale = False

    def __iter__(self):
        return self

    def __del__(self):
        self._finish()

    def _finish(self):
        cpp, self.cpp = getattr(self, 'cpp', None), None
        if cpp is not None:
            self.loader._give_back(cpp, self.gather)

    def __next__(self):
        from torch_geometric.data import Data

        if self.stale:
            raise RuntimeError(
                "NeighborLoader over a partition: a newer iteration started; "
                "a partition's loader runs one iteration at a time")
        if self.cpp is None:
            raise StopIteration
        out = self.cpp.next()
        if out is None:
            self._finish()
            raise StopIteration
        loader = self.loader
        (n_id, ei, colptr, x, deg, batch_size, nodes, edges, seed_y, y,
         split_masks, input_id) = out
        edge_index = _block_edge_index(ei, colptr, n_id.numel())
        if x is None and loader._x is not None:
            x = loader._x[n_id]
        batch = Data(x=x, edge_index=edge_index, n_id=n_id,
                     num_nodes=n_id.numel())
        # n_id's ids are the graph's nodes (a partition's: the whole
        # graph's), checked by the sampler: GCNConv need not read them again
        # to bound them (nn._validated_below).
        if not n_id.is_inference():  # (which has no version counter)
            n_id._dgcn_ids_below = (loader.store.num_nodes
                                    if loader.partition is None else
                                    loader.partition.num_nodes, n_id._version)
        if y is not None:
            batch.y = y
        elif loader._y is not None:
            batch.y = loader._y.index_select(0, n_id.to(loader._y.device))
        elif seed_y is not None:  # a partition's: the seeds' labels, -1 after
            batch.y = torch.full((n_id.numel(), ), -1, dtype=torch.long)
            batch.y[:batch_size] = seed_y
        if split_masks is not None:
            for bit, key in enumerate(_SPLIT_MASKS):
                batch[key] = split_masks[bit]
        elif loader._split_bits is not None:
            bits = loader._split_bits.index_select(0, n_id)
            for bit, key in enumerate(_SPLIT_MASKS):
                batch[key] = (bits & (1 << bit)) != 0
        for key, value in loader._node_attrs.items():
            batch[key] = value.index_select(0, n_id.to(value.device))
        for key, value in loader._graph_attrs.items():
            batch[key] = value
        if loader._edge_ids is not None:
            batch.e_id = loader._edge_ids(n_id, edge_index)
            for key, (value, dim) in loader._edge_attrs.items():
                batch[key] = value.index_select(dim,
                                                batch.e_id.to(value.device))
        batch.input_id = input_id
        batch.deg = deg
        batch.batch_size = batch_size
        batch.num_sampled_nodes = nodes
        batch.num_sampled_edges = edges
        batch.epoch = self.epoch
        if loader.pin_memory:
            batch = batch.pin_memory()
        if loader.transform is not None:
            batch = loader.transform(batch)
        return batch
