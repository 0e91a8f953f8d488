"""What the conv tests against PyG (test_sage_pyg.py, test_gat_pyg.py,
test_conv_pyg.py) share: a small random graph, a pair of layers with equal weights, and the
comparison of their outputs and gradients within 1e-5 relative
(||ours - PyG's|| / ||PyG's||)."""
import torch


def close(a, b, tol=1e-5):
    assert a.shape == b.shape
    err = ((a - b).norm() / b.norm().clamp(min=1e-30)).item()
    assert err <= tol, f'relative error {err:.3g} > {tol}'


def graph(seed=0, n=40, m=150, features=6):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n - 3, (2, m), generator=g)  # 3 isolated nodes
    ei[:, :5] = torch.arange(5).repeat(2, 1)  # a few self-loops
    ei = torch.cat([ei, ei[:, :7]], 1)  # and repeated edges
    return torch.randn(n, features, generator=g), ei


def pair(cls_ours, cls_theirs, *args, **options):
    ours = cls_ours(*args, **options)
    theirs = cls_theirs(*args, **options)
    torch.manual_seed(1)
    ours.reset_parameters()
    theirs.load_state_dict(ours.state_dict())
    return ours, theirs


def compare(ours, theirs, x, *args, **kwargs):
    r"""Outputs, and the gradients of x and of every parameter, of the two
    layers called alike."""
    results = []
    for conv in (ours, theirs):
        xs = x if isinstance(x, tuple) else (x, )
        xs = tuple(t.clone().requires_grad_() for t in xs)
        out = conv(xs if isinstance(x, tuple) else xs[0], *args, **kwargs)
        weights = torch.linspace(-1, 1, out.numel()).view_as(out)
        (out * weights).sum().backward()
        grads = [t.grad for t in xs]
        grads += [p.grad for _, p in sorted(conv.named_parameters())]
        results.append((out.detach(), grads))
    (a, ga), (b, gb) = results
    close(a, b)
    assert len(ga) == len(gb)
    for g1, g2 in zip(ga, gb):
        close(g1, g2)


def loads_both_ways(ours, theirs, x, ei):
    """PyG's freshly initialized state_dict loads into ours, ours (re-drawn)
    into PyG's, each giving PyG's output; the keys are PyG's, in order."""
    ours.load_state_dict(theirs.state_dict())  # PyG's -> ours
    close(ours(x, ei), theirs(x, ei))
    ours.reset_parameters()
    theirs.load_state_dict(ours.state_dict())  # ours -> PyG's
    close(ours(x, ei), theirs(x, ei))
    assert list(ours.state_dict()) == list(theirs.state_dict())
