"""dgcn: train GCNs on large graphs with dgcn's C++ engine from Python.

``dgcn.data`` opens ``.gcn`` stores, ``dgcn.loader.NeighborLoader`` samples
PyG-style mini-batches on C++ threads, ``dgcn.nn.GCNConv`` is a GCN layer over
dgcn's SpMM. Names and conventions follow PyTorch Geometric.
"""
import torch  # noqa: F401  (loads LibTorch before the extension)

from . import _C  # noqa: F401  (registers torch.ops.dgcn)
from . import data, loader, nn  # noqa: F401

__version__ = _C.__version__

__all__ = ['data', 'loader', 'nn', '__version__']
