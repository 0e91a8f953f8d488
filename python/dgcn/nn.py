"""GCN, GraphSAGE and GAT layers over dgcn's SpMM (``torch.ops.dgcn.spmm``,
with autograd)."""
import math
from typing import Callable, List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from . import _C

__all__ = ['GAT', 'GATConv', 'GCN', 'GCNConv', 'GraphSAGE', 'SAGEConv',
           'gcn_norm', 'layerwise_inference', 'load_checkpoint',
           'relu_dropout', 'save_checkpoint', 'trim_to_layer']


def gcn_norm(edge_index: Tensor, num_nodes: int,
             deg: Optional[Tensor] = None, num_dst: Optional[int] = None):
    r"""The normalized adjacency :math:`\hat{A}` of :obj:`edge_index` as CSR
    tensors ``(rowptr, col, value)``, row ``i`` aggregating into node ``i``
    (``models/gcn_norm.h``).

    Without :obj:`deg`: self-loops and symmetric normalization by in-degree,
    as :func:`torch_geometric.nn.conv.gcn_conv.gcn_norm`. With :obj:`deg`
    (every node's degree in the full graph, e.g. a :class:`NeighborLoader`
    batch's ``deg``): dgcn's unbiased normalization of a sampled batch, each
    sampled row rescaled by ``deg / sampled``. With :obj:`num_dst`: only the
    rows of the first :obj:`num_dst` nodes, which every edge must target.
    """
    return torch.ops.dgcn.gcn_norm(edge_index, num_nodes, deg, num_dst)


def relu_dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    r"""``F.dropout(x.relu(), p, training)`` in one pass over :obj:`x`, the
    backward pass recomputing the mask instead of storing it (CPU; on other
    devices torch's own ops). The mask is drawn from torch's generator, so
    :func:`torch.manual_seed` makes it reproducible."""
    if not 0 <= p < 1:
        raise ValueError(f"relu_dropout: p = {p} is not in [0, 1)")
    return torch.ops.dgcn.relu_dropout(x, float(p), bool(training))


def trim_to_layer(
    layer: int,
    num_sampled_nodes: List[int],
    num_sampled_edges: List[int],
    edge_index: Tensor,
    deg: Optional[Tensor] = None,
) -> Tuple[Tensor, Optional[Tensor], int, int]:
    r"""What layer :obj:`layer` of a GCN with one layer per hop of a
    :class:`~dgcn.loader.NeighborLoader` batch reads and computes, as
    :func:`torch_geometric.utils.trim_to_layer` but also leaving out the rows
    no later layer reads: layer ``i`` of ``L`` reads the nodes of hops
    ``0..L-i`` and computes those of hops ``0..L-1-i`` (the seeds at the last
    layer), along the edges into them.

    Returns ``(edge_index, deg, num_src, num_dst)``: the edges and degrees
    to pass to :class:`GCNConv` with ``num_dst``, and the rows the layer's
    input has (``x.size(0)``) and its output will have. With :obj:`deg` the
    seeds' outputs equal those of the untrimmed batch.
    """
    num_layers = len(num_sampled_edges)
    if len(num_sampled_nodes) != num_layers + 1:
        raise ValueError(f"trim_to_layer: {len(num_sampled_nodes)} hops of "
                         f"nodes for {num_layers} hops of edges")
    if not 0 <= layer < num_layers:
        raise ValueError(f"trim_to_layer: layer = {layer} is not in "
                         f"[0, {num_layers})")
    num_src = sum(num_sampled_nodes[:num_layers + 1 - layer])
    num_dst = sum(num_sampled_nodes[:num_layers - layer])
    num_edges = sum(num_sampled_edges[:num_layers - layer])
    colptr = _colptr(edge_index)
    if colptr is not None and colptr.numel() > num_dst:
        # A batch's EdgeIndex: the layer's edges are those into its first
        # num_dst targets, a prefix of the CSC form, which comes along (and
        # the batch's normalized matrix, shared by the layers: _NormCache).
        edge_index = _csc_edge_index(
            edge_index.as_tensor().narrow(1, 0, num_edges),
            colptr.narrow(0, 0, num_dst + 1), (num_src, num_dst),
            getattr(edge_index, '_dgcn_norm', None))
    else:
        edge_index = edge_index.narrow(1, 0, num_edges)
    if deg is not None:
        deg = deg.narrow(0, 0, num_src)
    return edge_index, deg, num_src, num_dst


def _csc_edge_index(edge_index: Tensor, colptr: Tensor, sparse_size,
                    norm: Optional['_NormCache']):
    r"""PyG's ``EdgeIndex`` of edges sorted by target whose CSC pointer
    :obj:`colptr` is known (so neither PyG nor :func:`_csc_norm` sorts them
    again), carrying the batch's :class:`_NormCache` :obj:`norm`."""
    from torch_geometric import EdgeIndex
    out = EdgeIndex(edge_index, sparse_size=sparse_size, sort_order='col')
    out._indptr = colptr
    out._dgcn_norm = norm
    return out


def _colptr(edge_index) -> Optional[Tensor]:
    r"""The CSC pointer of a PyG ``EdgeIndex`` sorted by target (a
    :class:`~dgcn.loader.NeighborLoader` batch's carries its sampled block's),
    else ``None``."""
    if not getattr(edge_index, 'is_sorted_by_col', False):
        return None
    if edge_index.sparse_size()[1] is None:
        return None
    return edge_index.get_indptr()


class _NormCache:
    r"""A batch's normalized adjacency with the full-graph degrees
    :obj:`deg`, shared by the layers of a forward pass (and the next ones on
    the same batch): layer ``i``'s rows are a prefix of layer ``0``'s, with
    the same entries (row ``r``'s values depend on ``deg`` and ``r``'s
    neighbours only), so the matrix is normalized once per batch and copied
    to the device once, not once per layer and call."""
    def __init__(self):
        self.key = None
        self.rows = -1
        self.adj = None
        self.rowptr = None  # on the CPU: each prefix's entry count

    def get(self, colptr, row, num_src, deg, rows, device):
        key = (deg.untyped_storage().data_ptr(), deg.storage_offset(),
               deg._version, device)
        if key != self.key or rows > self.rows:
            rowptr, col, value = torch.ops.dgcn.gcn_norm_csc(
                colptr, row, num_src, deg, rows)
            self.rowptr = rowptr
            self.adj = (rowptr.to(device), col.to(device), value.to(device))
            self.key, self.rows = key, rows
        if rows == self.rows:
            return self.adj
        nnz = int(self.rowptr[rows])
        rowptr, col, value = self.adj
        return (rowptr.narrow(0, 0, rows + 1), col.narrow(0, 0, nnz),
                value.narrow(0, 0, nnz))


def _csc_norm(edge_index, num_src: int, deg: Optional[Tensor],
              num_dst: Optional[int], device):
    r"""gcn_norm of a batch's EdgeIndex from its CSC form (no sort), or
    ``None`` for other edge indices. Only where the EdgeIndex's targets are
    exactly the rows computed (then it equals gcn_norm of the COO edges,
    which checks that every edge targets a computed row)."""
    colptr = _colptr(edge_index)
    rows = num_src if num_dst is None else num_dst
    if colptr is None or edge_index.sparse_size()[1] != rows:
        return None
    row = edge_index.as_tensor()[0]
    cache = getattr(edge_index, '_dgcn_norm', None)
    if (deg is not None and cache is not None and deg.dim() == 1
            and deg.numel() == num_src):  # (else the op raises, naming deg)
        return cache.get(colptr, row, num_src, deg, rows, device)
    return torch.ops.dgcn.gcn_norm_csc(colptr, row, num_src, deg, rows)


def _edge_norm(edge_index: Tensor, edge_weight: Optional[Tensor],
               num_nodes: int, improved: bool, add_self_loops: bool,
               normalize: bool) -> Tuple[Tensor, Tensor, Tensor]:
    r"""PyG's :func:`~torch_geometric.nn.conv.gcn_norm` for the options
    dgcn's own op does not compute (edge weights, ``improved``, no
    self-loops, no normalization): ``(source, target, weight)`` per edge,
    with torch's differentiable ops (gradients reach :obj:`edge_weight`)."""
    src, dst = edge_index[0], edge_index[1]
    # PyG's add_remaining_self_loops fills the loops with 2 (improved) only
    # for a weighted graph; without weights every loop weighs 1. Kept, to
    # give PyG's results.
    fill = 2.0 if improved and edge_weight is not None else 1.0
    if edge_weight is None:
        edge_weight = torch.ones(src.numel(), device=edge_index.device)
    if add_self_loops:  # add_remaining_self_loops: keep a loop's own weight
        loop = src == dst
        loop_weight = edge_weight.new_full((num_nodes, ), fill)
        loop_weight[src[loop]] = edge_weight[loop]
        nodes = torch.arange(num_nodes, device=edge_index.device)
        keep = ~loop
        src = torch.cat([src[keep], nodes])
        dst = torch.cat([dst[keep], nodes])
        edge_weight = torch.cat([edge_weight[keep], loop_weight])
    if normalize:
        deg = edge_weight.new_zeros(num_nodes).index_add(0, dst, edge_weight)
        deg_inv_sqrt = deg.pow(-0.5)
        deg_inv_sqrt = deg_inv_sqrt.masked_fill(deg_inv_sqrt == float('inf'),
                                                0.0)
        edge_weight = deg_inv_sqrt[src] * edge_weight * deg_inv_sqrt[dst]
    return src, dst, edge_weight


def _validated_below(ids: Tensor) -> Optional[int]:
    r"""The bound a :class:`~dgcn.loader.NeighborLoader` batch's ``n_id``
    carries (every id below it: the sampler's own nodes), while the tensor
    is unchanged since (its version counter, which every in-place torch op
    bumps), else ``None``. A copy (``.to(device)``) carries none."""
    mark = getattr(ids, '_dgcn_ids_below', None)
    if mark is None or mark[1] != ids._version:
        return None
    return mark[0]


def _n_id_bounded_by_spmm(n_id: Tensor) -> bool:
    r"""Whether GCNConv leaves bounding :obj:`n_id` to the SpMM: on a GPU,
    where each read of a bound waits for the device. The SpMM checks every
    column it reads (``n_id[col]``, col below ``n_id.numel()`` by
    construction) against ``x``'s rows before reading, in its one read, so
    an entry the layer reads is bounded all the same, and one it never
    reads cannot matter; on the CPU a read costs no wait, and n_id is
    checked whole."""
    return isinstance(n_id, Tensor) and n_id.device.type != 'cpu'


def _check_ids(name: str, ids: Tensor, bound: int, what: str,
               read_bounds: bool = True):
    if not isinstance(ids, Tensor):
        raise TypeError(f"GCNConv: {name} must be a tensor (got "
                        f"{type(ids).__name__})")
    if ids.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"GCNConv: {name} must hold int64 ids (got "
                        f"{ids.dtype})")
    if read_bounds and ids.numel() > 0:
        # Both bounds in one read: on CUDA each read waits for the GPU.
        low, high = torch.stack(torch.aminmax(ids)).tolist()
        if low < 0 or high >= bound:
            raise IndexError(f"GCNConv: {name} holds "
                             f"{low if low < 0 else high}, not {what} in "
                             f"[0, {bound})")


class GCNConv(torch.nn.Module):
    r"""The graph convolution of Kipf and Welling,
    :math:`\mathbf{X}' = \hat{A} \mathbf{X} \mathbf{\Theta} + b`, computed
    with dgcn's SpMM: :class:`torch_geometric.nn.GCNConv`'s signature,
    options, parameters (``lin.weight``, ``bias``) and results.

    Args (PyG's):
        in_channels (int): size of each input sample; ``-1``: inferred at
            the first call (lazy, as PyG's).
        out_channels (int): size of each output sample.
        improved (bool, optional): self-loops of weight 2.
            (default: :obj:`False`)
        cached (bool, optional): keep :math:`\hat{A}` of the first call, for
            transductive learning on one graph. A later call on another
            graph (other :obj:`edge_index`, :obj:`edge_weight`, node count or
            :obj:`n_id`) raises :class:`ValueError` instead of returning
            rows of the first. (default: :obj:`False`)
        add_self_loops (bool, optional): add self-loops; default:
            :obj:`normalize`. (default: :obj:`None`)
        normalize (bool, optional): symmetric normalization.
            (default: :obj:`True`)
        bias (bool, optional): learn an additive bias. (default: :obj:`True`)

    Other :class:`~torch_geometric.nn.conv.MessagePassing` arguments
    (``aggr``, ``flow``, ...) raise :class:`NotImplementedError`.

    ``forward(x, edge_index, edge_weight=None, *, deg=None, num_dst=None,
    n_id=None)``: PyG's first three; dgcn's own keyword-only. :obj:`deg`
    (every node's degree in the full graph, a
    :class:`~dgcn.loader.NeighborLoader` batch's ``deg``) selects the
    unbiased normalization of a sampled batch (default options only);
    :obj:`num_dst` computes only the first rows (:func:`gcn_norm`,
    :func:`trim_to_layer`). With :obj:`n_id`, :obj:`x` holds the features of
    every node of the graph (e.g. a store's ``x``, mapped, not copied) and
    the batch's node ``i`` is row ``n_id[i]``: the layer reads only the rows
    it needs, so a :class:`~dgcn.loader.NeighborLoader` with
    ``gather_features=False`` need not copy them into every batch.
    """
    def __init__(self, in_channels: int, out_channels: int,
                 improved: bool = False, cached: bool = False,
                 add_self_loops: Optional[bool] = None,
                 normalize: bool = True, bias: bool = True, **kwargs):
        super().__init__()
        for key, value in kwargs.items():
            if not (key == 'aggr' and value == 'add') and not (
                    key == 'flow' and value == 'source_to_target'):
                raise NotImplementedError(
                    f"GCNConv: {key}={value!r} is not supported by dgcn's "
                    f"GCNConv (it sums messages source -> target)")
        if add_self_loops is None:
            add_self_loops = normalize
        if add_self_loops and not normalize:
            raise ValueError("GCNConv: add_self_loops=True needs "
                             "normalize=True (as PyG's GCNConv)")
        if not isinstance(in_channels, int) or (in_channels < 1
                                                and in_channels != -1):
            raise ValueError(f"GCNConv: in_channels = {in_channels!r}; "
                             f"expected an integer >= 1, or -1 (lazy)")
        if not isinstance(out_channels, int) or out_channels < 1:
            raise ValueError(f"GCNConv: out_channels = {out_channels!r}; "
                             f"expected an integer >= 1")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.improved = improved
        self.cached = cached
        self.add_self_loops = add_self_loops
        self.normalize = normalize
        self._cached_adj = None
        self._cached_key = None
        if in_channels == -1:
            self.lin = torch.nn.LazyLinear(out_channels, bias=False)
        else:
            self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(out_channels))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def _lazy(self) -> bool:
        return isinstance(self.lin.weight,
                          torch.nn.parameter.UninitializedParameter)

    def reset_parameters(self):
        # Glorot weights, zero bias: PyG's GCNConv defaults.
        if not self._lazy():
            self.in_channels = self.lin.weight.size(1)
            bound = math.sqrt(6.0 / (self.in_channels + self.out_channels))
            torch.nn.init.uniform_(self.lin.weight, -bound, bound)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        self._cached_adj = None
        self._cached_key = None

    def _check_inputs(self, x, edge_index, edge_weight, deg, num_dst, n_id):
        if not isinstance(x, Tensor) or x.dim() != 2:
            got = (tuple(x.shape)
                   if isinstance(x, Tensor) else type(x).__name__)
            raise ValueError(f"GCNConv: x must be a [num_nodes, "
                             f"in_channels] tensor (got {got})")
        if x.dtype not in (torch.float32, torch.bfloat16):
            raise TypeError(f"GCNConv: x must be float32 or bfloat16 (got "
                            f"{x.dtype})")
        if self._lazy():
            self.lin.weight.materialize((self.out_channels, x.size(1)))
            self.reset_parameters()
        if x.size(1) != self.in_channels:
            raise ValueError(f"GCNConv: x has {x.size(1)} features; this "
                             f"layer takes in_channels = {self.in_channels}")
        if not isinstance(edge_index, Tensor) or (edge_index.layout
                                                  != torch.strided):
            what = (type(edge_index).__name__ if not isinstance(
                edge_index, Tensor) else f'a {edge_index.layout} tensor')
            raise NotImplementedError(
                f"GCNConv: edge_index is {what}; dgcn's GCNConv takes a "
                f"[2, E] int64 tensor (or PyG's EdgeIndex), not a sparse "
                f"adjacency")
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"GCNConv: edge_index must be [2, E] (got "
                             f"{tuple(edge_index.shape)})")
        if edge_index.dtype != torch.int64:
            raise TypeError(f"GCNConv: edge_index must be int64 (got "
                            f"{edge_index.dtype})")
        if n_id is not None:
            if x.size(0) > 2**31 - 1:  # the SpMM's column ids are int32
                raise ValueError(f"GCNConv: x has {x.size(0)} rows; with "
                                 f"n_id it may have at most 2^31 - 1")
            below = _validated_below(n_id)
            _check_ids('n_id', n_id, x.size(0), 'a row of x',
                       read_bounds=((below is None or below > x.size(0))
                                    and not _n_id_bounded_by_spmm(n_id)))
            if n_id.dim() != 1:
                raise ValueError(f"GCNConv: n_id must be 1-D (got "
                                 f"{tuple(n_id.shape)})")
        num_src = x.size(0) if n_id is None else n_id.numel()
        if num_dst is not None and not (isinstance(num_dst, int)
                                        and 0 <= num_dst <= num_src):
            raise ValueError(f"GCNConv: num_dst = {num_dst!r} is not in "
                             f"[0, {num_src}]")
        if edge_weight is not None:
            if not isinstance(edge_weight, Tensor):
                raise TypeError(f"GCNConv: edge_weight must be a tensor "
                                f"(got {type(edge_weight).__name__})")
            if not edge_weight.is_floating_point():
                raise TypeError(
                    f"GCNConv: edge_weight must be floating point (got "
                    f"{edge_weight.dtype}); dgcn's degrees for a sampled "
                    f"batch are the keyword argument deg=")
            if edge_weight.shape != (edge_index.size(1), ):
                raise ValueError(f"GCNConv: edge_weight must be [E = "
                                 f"{edge_index.size(1)}] (got "
                                 f"{tuple(edge_weight.shape)})")
        default = (edge_weight is None and not self.improved
                   and self.add_self_loops and self.normalize)
        if not default:  # (dgcn's gcn_norm op checks the ids itself)
            _check_ids('edge_index', edge_index, num_src, 'a node id')
        if deg is not None and not default:
            raise NotImplementedError(
                "GCNConv: deg= (the unbiased normalization of a sampled "
                "batch) works with the default options only, not with "
                "edge_weight, improved, add_self_loops=False or "
                "normalize=False")
        return num_src, default

    def _cache_hit(self, key) -> bool:
        if self._cached_key is None:
            return False
        old = self._cached_key
        same = all(
            (a is b) or (isinstance(a, Tensor) and isinstance(b, Tensor)
                         and a.shape == b.shape and a.device == b.device
                         and torch.equal(a, b)) or
            (not isinstance(a, Tensor) and a == b) for a, b in zip(old, key))
        if not same:
            raise ValueError(
                "GCNConv(cached=True): called on another graph than the "
                "first call's (edge_index, edge_weight, node count, num_dst "
                "or n_id differ); cached=True is for transductive learning "
                "on one graph: use cached=False for sampled batches, or "
                "reset_parameters() to forget the cache")
        return True

    def forward(self, x: Tensor, edge_index: Tensor,
                edge_weight: Optional[Tensor] = None, *,
                deg: Optional[Tensor] = None,
                num_dst: Optional[int] = None,
                n_id: Optional[Tensor] = None) -> Tensor:
        num_src, default = self._check_inputs(x, edge_index, edge_weight,
                                              deg, num_dst, n_id)
        key = (edge_index, edge_weight, num_src, num_dst, n_id, deg)
        if self.cached and self._cache_hit(key):
            adj = self._cached_adj
        elif default:
            adj = _csc_norm(edge_index, num_src, deg, num_dst, x.device)
            if adj is None:
                adj = gcn_norm(edge_index, num_src, deg, num_dst)
        else:
            adj = _edge_norm(edge_index, edge_weight, num_src, self.improved,
                             self.add_self_loops, self.normalize)
        if self.cached and self._cached_key is None:
            self._cached_adj, self._cached_key = adj, key
        if not default:
            return self._propagate_edges(adj, x, num_src, num_dst, n_id)
        if n_id is not None:  # columns: rows of x, the whole graph's
            rowptr, col, value = adj
            if _n_id_bounded_by_spmm(n_id):
                # Not narrowed: the SpMM bounds the very values it reads.
                adj = rowptr, n_id.index_select(0, col), value
            else:
                # Gathered as int32 (n_id's entries are rows of x, fewer
                # than 2^31: checked, or the loader's own): one pass, not
                # int64 ids gathered and narrowed.
                adj = rowptr, n_id.int().index_select(0, col), value
        rowptr, col, value = adj
        # With n_id, x is the whole graph's: only aggregating first reads
        # just the batch's rows of it.
        aggregate_first = n_id is not None or _C.aggregate_first(
            rowptr.numel() - 1, num_src, col.numel(), self.in_channels,
            self.out_channels, self.training, x.requires_grad)
        try:
            return self.propagate(adj, x, aggregate_first)
        except IndexError:
            if n_id is not None and _n_id_bounded_by_spmm(n_id):
                # The SpMM found a column (an entry of n_id) out of x's
                # rows: name n_id and its value (a read only on this path).
                _check_ids('n_id', n_id, x.size(0), 'a row of x')
            raise

    def _propagate_edges(self, edges, x, num_src, num_dst, n_id):
        # PyG's options beyond the defaults: weights per edge from
        # _edge_norm. A weight that needs a gradient takes torch's
        # index_add (differentiable in the weights); otherwise the edges
        # become CSR rows for dgcn's SpMM.
        src, dst, weight = edges
        rows = num_src if num_dst is None else num_dst
        if num_dst is not None:
            inside = dst < num_dst
            src, dst, weight = src[inside], dst[inside], weight[inside]
        if n_id is not None:
            x = x.index_select(0, n_id.to(x.device))
        h = self.lin(x)
        src, dst = src.to(h.device), dst.to(h.device)
        weight = weight.to(h.device, torch.float32)
        if weight.requires_grad:
            out = h.new_zeros(rows, h.size(1)).index_add(
                0, dst, h.index_select(0, src) * weight.unsqueeze(1))
        else:
            order = torch.argsort(dst, stable=True)
            rowptr = torch.zeros(rows + 1, dtype=torch.long, device=h.device)
            rowptr[1:] = torch.bincount(dst, minlength=rows).cumsum(0)
            out = torch.ops.dgcn.spmm(rowptr, src[order].int(),
                                      weight[order].contiguous(), h)
        if self.bias is not None:
            out = out + self.bias
        return out

    def propagate(self, adj: Tuple[Tensor, Tensor, Tensor], x: Tensor,
                  aggregate_first: bool,
                  transformed: Optional[Tensor] = None) -> Tensor:
        r"""The layer's output for the normalized adjacency :obj:`adj`
        ``(rowptr, col, value)``: ``lin(A x)`` aggregating first, else
        ``A lin(x)`` (with :obj:`transformed` = ``lin(x)`` when computed
        once for several row chunks), plus the bias."""
        rowptr, col, value = adj
        if aggregate_first:
            z = torch.ops.dgcn.spmm(rowptr, col, value, x)
            weight = self._weight_in_out()
            if weight is None:
                out = self.lin(z)
            elif self.bias is None:
                return torch.mm(z, weight)
            elif not torch.is_autocast_enabled(z.device.type):
                # The bias added inside the product: no pass of its own.
                # (Under autocast PyG's separate add makes the output
                # float32, so it stays separate there.)
                return torch.addmm(self.bias, z, weight)
            else:
                out = torch.mm(z, weight)
        else:
            if transformed is None:
                weight = self._weight_in_out()
                transformed = (self.lin(x) if weight is None else
                               torch.mm(x, weight))
            out = torch.ops.dgcn.spmm(rowptr, col, value, transformed)
        if self.bias is not None:
            out = out + self.bias
        return out

    def _weight_in_out(self) -> Optional[Tensor]:
        r"""``lin.weight`` as ``[in_channels, out_channels]`` (a copy of its
        few entries) for ``x @ W`` as dgcn-train multiplies: its backward
        computes ``dW`` as ``x.t() @ dy``, where ``x @ lin.weight.t()``
        computes ``(dy.t() @ x).t()``, a slower GEMM over the batch's rows
        (MKL, one thread: ~34 against ~42 ms for a products batch's first
        layer); with the bias it is one ``addmm``, not a product and then an
        add over the whole output. ``None`` where :obj:`lin` is not a plain
        :class:`~torch.nn.Linear` without hooks: then ``self.lin(x)`` is
        called, as PyG's layer calls it."""
        lin = self.lin
        if (type(lin) is not torch.nn.Linear or lin._forward_hooks
                or lin._forward_pre_hooks):
            return None
        return lin.weight.t().contiguous()

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels})')


@torch.no_grad()
def layerwise_inference(
    convs: Sequence[GCNConv],
    x: Tensor,
    store,
    act: Callable[[Tensor], Tensor] = torch.relu,
    chunk_rows: int = 1 << 16,
) -> Tensor:
    r"""Every node's output of the GCN :obj:`convs` (:obj:`act` between
    layers, no dropout) with every neighbour: exact, where sampled batches
    estimate. Layer by layer over the whole graph of :obj:`store` (a
    :class:`dgcn.data.Store`), :obj:`chunk_rows` rows of the normalized
    adjacency at a time (full degrees, self-loops: :func:`gcn_norm` on the
    whole graph), so memory holds two layers' outputs, never a k-hop
    subgraph per node (``models/inference.h``, which ``dgcn-train`` and
    ``dgcn-predict`` use). :obj:`x` is ``[num_nodes, in_channels]``, e.g.
    ``store.x``."""
    num_nodes = store.num_nodes
    if x.size(0) != num_nodes:
        raise ValueError(f"layerwise_inference: x has {x.size(0)} rows for "
                         f"{num_nodes} nodes")
    if chunk_rows < 1:
        raise ValueError(f"layerwise_inference: chunk_rows = {chunk_rows}; "
                         f"expected >= 1")
    if x.dim() != 2 or x.dtype != torch.float32:
        raise TypeError(f"layerwise_inference: x must be a float32 "
                        f"[num_nodes, in_channels] tensor (got "
                        f"{x.dtype} {tuple(x.shape)})")
    for i, conv in enumerate(convs):
        width = x.size(1) if i == 0 else convs[i - 1].out_channels
        if conv.in_channels != width:
            raise ValueError(f"layerwise_inference: convs[{i}] takes "
                             f"{conv.in_channels} features, gets {width}")
    for i, conv in enumerate(convs):
        # One order for the whole layer: transforming first multiplies
        # every row by the weights once, not once per chunk.
        aggregate_first = _C.aggregate_first(num_nodes, num_nodes,
                                             store.num_edges + num_nodes,
                                             conv.in_channels,
                                             conv.out_channels, False, False)
        h = None if aggregate_first else conv.lin(x)
        out = x.new_empty(num_nodes, conv.out_channels)
        for begin in range(0, num_nodes, chunk_rows):
            end = min(begin + chunk_rows, num_nodes)
            adj = tuple(t.to(x.device) for t in store.adjacency_rows(begin,
                                                                     end))
            out[begin:end] = conv.propagate(adj, x, aggregate_first, h)
        x = act(out) if i < len(convs) - 1 else out
    return x


# PyG's GraphSAGE and GAT layers over the same ops (_sage.py, _gat.py).
from ._gat import GATConv  # noqa: E402
from ._sage import SAGEConv  # noqa: E402
# dgcn-train's model (checkpoint.py builds on the layers above).
from .checkpoint import GCN, load_checkpoint, save_checkpoint  # noqa: E402
from ._gnn_checkpoint import GAT, GraphSAGE  # noqa: E402
