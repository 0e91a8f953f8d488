"""One rank of test_partition.py (under torchrun): the batches of a
NeighborLoader over this rank's part against a loader over the whole store,
same seed, rank and settings. Writes OUT/rank-R.json."""
import json
import sys

import torch
import torch.distributed as dist

import dgcn
from dgcn.loader import NeighborLoader


def main(whole_path, part_dir, out):
    dist.init_process_group('gloo')
    rank = dist.get_rank()
    whole = dgcn.data.open_store(whole_path, num_threads=1)
    part = dgcn.data.open_partition(part_dir, num_threads=1)
    settings = dict(num_neighbors=[5, 3], batch_size=32, seed=7)
    ours = NeighborLoader(part, input_nodes=part.train_index, **settings)
    theirs = NeighborLoader(whole, input_nodes=whole.train_index,
                            num_workers=2, **settings)
    ours_batches, theirs_batches = list(ours), list(theirs)
    # The same number of batches: a zip would stop at the shorter loader.
    assert len(ours_batches) == len(theirs_batches) == len(ours), (
        len(ours_batches), len(theirs_batches), len(ours))
    checked = 0
    for a, b in zip(ours_batches, theirs_batches):
        assert torch.equal(a.n_id, b.n_id), checked
        assert torch.equal(a.edge_index, b.edge_index), checked
        assert torch.equal(a.x, b.x), checked
        assert torch.equal(a.deg, b.deg), checked
        assert torch.equal(a.y[:a.batch_size], b.y[:b.batch_size]), checked
        assert (a.y[a.batch_size:] == -1).all()
        checked += 1
    dist.barrier()
    with open(f'{out}/rank-{rank}.json', 'w') as f:
        json.dump({'rank': rank, 'batches': checked, 'len': len(ours),
                   'num_nodes': part.num_nodes,
                   'part_nodes': part.store.num_nodes}, f)
    dist.destroy_process_group()


if __name__ == '__main__':
    main(*sys.argv[1:])
