"""torch.ops.dgcn as PyTorch citizens: torch.library.opcheck passes for
every op (schema, fake kernel, autograd registration, dispatch), and
torch.compile of a GCN built from dgcn.nn trains with the loss of eager
mode on the CPU (as PyG's test_compile_conv.py checks its layers)."""
import torch

import dgcn
from dgcn._csr import target_of_entries


def _graph(n=30, m=90, seed=0):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, m), generator=g)
    return torch.cat([ei, ei.flip(0)], 1), torch.randn(n, 8, generator=g)


def test_opcheck_every_op():
    ei, x = _graph()
    n = x.size(0)
    deg = torch.bincount(ei[1], minlength=n)
    for args in [(ei, n, None, None), (ei, n, deg, None)]:
        torch.library.opcheck(torch.ops.dgcn.gcn_norm.default, args)
    order = torch.argsort(ei[1], stable=True)
    colptr = torch.zeros(n + 1, dtype=torch.long)
    colptr[1:] = torch.bincount(ei[1], minlength=n).cumsum(0)
    for args in [(colptr, ei[0][order], n, None, None),
                 (colptr, ei[0][order], n, deg, n // 2)]:
        torch.library.opcheck(torch.ops.dgcn.gcn_norm_csc.default, args)
    rowptr, col, value = dgcn.nn.gcn_norm(ei, n)
    for grad in (False, True):
        torch.library.opcheck(
            torch.ops.dgcn.spmm.default,
            (rowptr, col, value.clone().requires_grad_(grad),
             x.clone().requires_grad_()))
    dy = torch.randn(n, 4)
    torch.library.opcheck(torch.ops.dgcn.spmm_transposed.default,
                          (rowptr, col, value, dy, n))
    torch.library.opcheck(torch.ops.dgcn.relu_dropout.default,
                          (x.clone().requires_grad_(), 0.0, True))
    torch.library.opcheck(torch.ops.dgcn.relu_dropout.default,
                          (x.clone().requires_grad_(), 0.5, False))
    y = dgcn.nn.relu_dropout(x, p=0.5, training=True)
    torch.library.opcheck(torch.ops.dgcn.relu_dropout_backward.default,
                          (y, torch.randn_like(y), 2.0))


def test_spmm_gradients_match_dense():
    ei, x = _graph(seed=1)
    rowptr, col, value = dgcn.nn.gcn_norm(ei, x.size(0))
    dense = torch.sparse_csr_tensor(rowptr, col.long(), value,
                                    (x.size(0), x.size(0))).to_dense()
    x1 = x.clone().requires_grad_()
    v1 = value.clone().requires_grad_()
    out = torch.ops.dgcn.spmm(rowptr, col, v1, x1)
    w = torch.randn_like(out)
    (out * w).sum().backward()
    x2 = x.clone().requires_grad_()
    d2 = dense.clone().requires_grad_()
    ((d2 @ x2) * w).sum().backward()
    torch.testing.assert_close(out, dense @ x, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x1.grad, x2.grad, rtol=1e-5, atol=1e-5)
    rows = target_of_entries(rowptr)
    torch.testing.assert_close(v1.grad, d2.grad[rows, col.long()],
                               rtol=1e-5, atol=1e-5)


def test_spmm_under_autocast_computes_in_bf16():
    # A matrix product, run in autocast's lower precision (float32 sums);
    # tests/python/test_bf16.py has the rest of the bf16 rules.
    ei, x = _graph(seed=2)
    rowptr, col, value = dgcn.nn.gcn_norm(ei, x.size(0))
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = torch.ops.dgcn.spmm(rowptr, col, value, x)
    assert out.dtype == torch.bfloat16
    want = torch.ops.dgcn.spmm(rowptr, col, value, x.bfloat16().float())
    assert torch.equal(out, want.bfloat16())


class _GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = dgcn.nn.GCNConv(in_channels, hidden)
        self.conv2 = dgcn.nn.GCNConv(hidden, out_channels)

    def forward(self, x, edge_index):
        h = dgcn.nn.relu_dropout(self.conv1(x, edge_index), p=0.0,
                                 training=self.training)
        return self.conv2(h, edge_index)


def test_compiled_model_trains_like_eager(trains_like_eager):
    ei, x = _graph(n=40, m=120, seed=3)
    y = torch.randint(0, 3, (40, ))
    trains_like_eager(lambda: _GCN(8, 16, 3), x, ei, y)
