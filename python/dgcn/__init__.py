"""dgcn: train GCNs on large graphs with dgcn's C++ engine from Python.

``dgcn.data`` opens ``.gcn`` stores, ``dgcn.loader.NeighborLoader`` samples
PyG-style mini-batches on C++ threads, ``dgcn.nn.GCNConv`` is a GCN layer over
dgcn's SpMM. Names and conventions follow PyTorch Geometric.
"""
import torch  # noqa: F401  (loads LibTorch before the extension)

from . import _C  # noqa: F401  (registers torch.ops.dgcn)
from . import _ops  # noqa: F401  (their fake kernels and gradients)
from . import data, loader, nn  # noqa: F401

__version__ = _C.__version__

__all__ = ['data', 'loader', 'nn', 'enable_cpu_cache', 'cpu_cache_stats',
           '__version__']


def enable_cpu_cache(max_bytes: int = 4 << 30) -> None:
    r"""Makes torch's CPU allocator keep freed large blocks (1 MiB and up)
    for reuse, up to :obj:`max_bytes`, as ``dgcn-train --cpu-cache-gb``
    does. Training allocates the same large activations every batch; served
    fresh, each costs a page fault per 4 KiB. A process-wide act, so it is
    the caller's choice: call it once, early, before large tensors exist.
    Later calls only change the cap."""
    if max_bytes <= 0:
        raise ValueError(f"enable_cpu_cache: max_bytes = {max_bytes}; "
                         f"expected a positive number of bytes")
    _C.install_caching_cpu_allocator(int(max_bytes))


def cpu_cache_stats() -> dict:
    r"""What :func:`enable_cpu_cache`'s allocator did: ``installed``,
    ``large_allocations``, ``reused``, ``grown``, ``mapped_bytes``, ``peak_mapped_bytes``,
    ``cached_bytes``."""
    return _C.cpu_allocator_stats()
