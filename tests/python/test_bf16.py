"""bfloat16 through torch.ops.dgcn and dgcn.nn.GCNConv (issue 32): the ops
take bf16 dense inputs directly (values stay float32, sums float32, the
result is the float32 one rounded once), and under
torch.autocast(dtype=torch.bfloat16) they run in bf16 as torch's matrix
products do, so GCNConv's output dtypes are those of torch's own layers."""
import copy

import pytest
import torch

import dgcn
from dgcn._csr import target_of_entries


def _graph(n=40, m=160, f=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, m), generator=g)
    return torch.cat([ei, ei.flip(0)], 1), torch.randn(n, f, generator=g)


def test_spmm_takes_bf16_and_rounds_the_float32_result_once():
    ei, x = _graph()
    rowptr, col, value = dgcn.nn.gcn_norm(ei, x.size(0))
    xb = x.bfloat16()
    out = torch.ops.dgcn.spmm(rowptr, col, value, xb)
    assert out.dtype == torch.bfloat16
    want = torch.ops.dgcn.spmm(rowptr, col, value, xb.float())
    assert torch.equal(out, want.bfloat16())
    dy = torch.randn(x.size(0), 8).bfloat16()
    dx = torch.ops.dgcn.spmm_transposed(rowptr, col, value, dy, x.size(0))
    assert dx.dtype == torch.bfloat16
    assert torch.equal(
        dx,
        torch.ops.dgcn.spmm_transposed(rowptr, col, value, dy.float(),
                                       x.size(0)).bfloat16())


def test_spmm_bf16_gradients_take_the_inputs_dtypes():
    ei, x = _graph(seed=1)
    rowptr, col, value = dgcn.nn.gcn_norm(ei, x.size(0))
    xb = x.bfloat16().requires_grad_()
    v = value.clone().requires_grad_()
    # Seeded here: the global generator's state depends on the tests before.
    r = torch.randn(x.size(0), 8, generator=torch.Generator().manual_seed(2))
    (torch.ops.dgcn.spmm(rowptr, col, v, xb).float() * r).sum().backward()
    assert xb.grad.dtype == torch.bfloat16 and v.grad.dtype == torch.float32
    x32 = xb.detach().float().requires_grad_()
    v32 = value.clone().requires_grad_()
    (torch.ops.dgcn.spmm(rowptr, col, v32, x32) * r).sum().backward()
    torch.testing.assert_close(xb.grad.float(), x32.grad, rtol=2e-2,
                               atol=2e-2)
    # An edge's gradient sums r[i, k] * x[j, k] over k with the upstream r
    # rounded to bf16 (relative error <= 2**-9 a term): bound the error by
    # 2**-8 of the sum of the terms' magnitudes, not a fixed tolerance,
    # which a term-cancelling edge exceeds.
    row = target_of_entries(rowptr)
    bound = 2**-8 * (r.abs()[row] * x32.detach().abs()[col.long()]).sum(1)
    assert ((v.grad - v32.grad).abs() <= bound + 1e-6).all()


def test_opcheck_bf16():
    ei, x = _graph(seed=2)
    rowptr, col, value = dgcn.nn.gcn_norm(ei, x.size(0))
    for grad in (False, True):
        torch.library.opcheck(
            torch.ops.dgcn.spmm.default,
            (rowptr, col, value.clone().requires_grad_(grad),
             x.bfloat16().requires_grad_()))
    torch.library.opcheck(
        torch.ops.dgcn.spmm_transposed.default,
        (rowptr, col, value, torch.randn(x.size(0), 4).bfloat16(),
         x.size(0)))


def test_spmm_under_autocast_runs_in_bf16_like_mm():
    ei, x = _graph(seed=3)
    rowptr, col, value = dgcn.nn.gcn_norm(ei, x.size(0))
    x = x.requires_grad_()
    w = torch.randn(8, 8)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = torch.ops.dgcn.spmm(rowptr, col, value, x)
        mm = torch.mm(x, w)
    assert out.dtype == mm.dtype == torch.bfloat16
    assert torch.equal(
        out, torch.ops.dgcn.spmm(rowptr, col, value, x.detach().bfloat16()))
    out.float().sum().backward()
    assert x.grad.dtype == torch.float32  # through autocast's cast, as mm's


@pytest.mark.parametrize('channels', [(8, 16), (16, 4)])  # both orders
@pytest.mark.parametrize('bias', [True, False])
def test_gcnconv_under_autocast_like_torch_layers(channels, bias):
    ei, x = _graph(f=channels[0], seed=4)
    torch.manual_seed(0)
    conv = dgcn.nn.GCNConv(*channels, bias=bias)
    x = x.requires_grad_()
    want = conv(x, ei)
    want.sum().backward()
    want_grads = [p.grad.clone() for p in conv.parameters()]
    conv.zero_grad()
    x.grad = None
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = conv(x, ei)
        # torch's own layers on the same parameters: Linear, then the bias.
        ref = torch.nn.functional.linear(x, conv.lin.weight)
        if bias:
            ref = ref + conv.bias
    assert out.dtype == ref.dtype
    assert out.dtype == (torch.float32 if bias else torch.bfloat16)
    torch.testing.assert_close(out.float(), want.detach(), rtol=3e-2,
                               atol=3e-2)
    out.float().sum().backward()
    # Master weights stay float32, their gradients too.
    for p, g in zip(conv.parameters(), want_grads):
        assert p.dtype == p.grad.dtype == torch.float32
        torch.testing.assert_close(p.grad, g, rtol=3e-2, atol=5e-2)


def test_gcnconv_in_bf16_takes_bf16_inputs():
    ei, x = _graph(seed=5)
    torch.manual_seed(0)
    conv = dgcn.nn.GCNConv(8, 16)
    torch.nn.init.uniform_(conv.bias, -0.5, 0.5)
    want = conv(x, ei)
    conv_bf16 = copy.deepcopy(conv).to(torch.bfloat16)
    out = conv_bf16(x.bfloat16(), ei)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), want.detach(), rtol=3e-2,
                               atol=3e-2)
