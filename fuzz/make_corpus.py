#!/usr/bin/env python3
"""Seed corpora for the fuzz harnesses: small valid inputs in every layout
dgcn reads (numpy/scipy/pickle/gzip write them as the real datasets do), in
the harnesses' formats (fuzz/fuzz_files.h: a folder is a sequence of
[u32 length][bytes] records). The .gcn seeds come from dgcn-prep itself
(scripts/fuzz.sh). Usage: make_corpus.py OUT_DIR"""
import collections, gzip, io, json, os, pickle, struct, sys, zipfile

import numpy as np
import scipy.sparse as sp

out = sys.argv[1]


def put(target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)


def pack(*files):
    return b"".join(struct.pack("<I", len(f)) + f for f in files)


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def npz(**arrays):
    b = io.BytesIO()
    np.savez(b, **arrays)
    return b.getvalue()


# npy: a few dtypes and shapes.
put("npy_fuzz", "f4", npy(np.arange(6, dtype=np.float32).reshape(2, 3)))
put("npy_fuzz", "i8", npy(np.array([3, 1, 2], dtype=np.int64)))
put("npy_fuzz", "u1f", npy(np.asfortranarray(np.ones((2, 2), dtype=np.uint8))))
put("npy_fuzz", "s3", npy(np.array([b"csr"], dtype="S3")))

# npz (gnn-benchmark): a 4-cycle, sparse features, labels.
adj = sp.csr_matrix(np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], dtype=np.float32))
x = sp.csr_matrix(np.eye(4, 3, dtype=np.float32))
graph_npz = npz(adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr, adj_shape=np.array(adj.shape),
                attr_data=x.data, attr_indices=x.indices, attr_indptr=x.indptr, attr_shape=np.array(x.shape),
                labels=np.array([0, 1, 0, 1]))
put("npz_fuzz", "cycle", graph_npz)
put("npz_fuzz", "dense", npz(adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr,
                             adj_shape=np.array(adj.shape), attr_matrix=np.ones((4, 2), dtype=np.float64)))
comp = io.BytesIO()
np.savez_compressed(comp, adj_data=adj.data, adj_indices=adj.indices, adj_indptr=adj.indptr,
                    adj_shape=np.array(adj.shape), labels=np.array([1, 1, 0, -1]))
put("npz_fuzz", "compressed", comp.getvalue())

# Edge lists.
put("edgelist_fuzz", "snap", b"# comment\n0\t1\n1 2\n  2   0  \n2\t2\n4 3\n")
put("edgelist_fuzz", "long", "".join("%d %d\n" % (i % 7, (i * 3) % 11) for i in range(60)).encode())

# OGB: raw/num-node-list, num-edge-list, edge.csv.gz, node-feat, node-label, split/s/{train,valid,test}.
gz = lambda t: gzip.compress(t.encode())
put("ogb_fuzz", "products", pack(b"5\n", b"4\n", gz("0,1\n1,2\n2,3\n3,4\n"), b"0.5,1\n1,0\n0,0\n2,2\n1,1\n",
                                 b"0\n1\nnan\n1.0\n0\n", b"0\n1\n", b"3\n", gz("4\n")))

# GraphSAINT: adj_full.npz (scipy save_npz), feats.npy, class_map.json, role.json.
b = io.BytesIO()
sp.save_npz(b, adj)
put("graphsaint_fuzz", "multilabel", pack(b.getvalue(), npy(np.ones((4, 2), dtype=np.float32)),
                                          json.dumps({"0": [1, 0], "1": [0, 1], "2": [1, 1], "3": [0, 0]}).encode(),
                                          json.dumps({"tr": [0, 1], "va": [2], "te": [3]}).encode()))
put("graphsaint_fuzz", "single", pack(b.getvalue(), npy(np.ones((4, 2), dtype=np.float32)),
                                      json.dumps({"0": 1, "1": 0, "2": 2, "3": 1}).encode(),
                                      json.dumps({"tr": [0], "va": [1], "te": [2, 3]}).encode()))


# MNIST IDX: images (count, rows, cols) and labels, the test images gzipped.
def idx(dims, data):
    return struct.pack(">BBBB", 0, 0, 8, len(dims)) + b"".join(struct.pack(">I", d) for d in dims) + bytes(data)


put("mnist_fuzz", "tiny", pack(idx([3, 2, 2], range(12)), idx([3], [1, 2, 3]), gzip.compress(idx([2, 2, 2], range(8))),
                               idx([2], [0, 9])))

# Planetoid (pickle protocol 2, as the original files): cora-like with 2 train
# nodes, allx of 502 nodes (2 train + 500 valid), 3 test nodes.
def feats(ids):
    return sp.csr_matrix(np.array([[v % 5, 1] for v in ids], dtype=np.float32))


def onehot(ids):
    return np.array([[1 if v % 2 == c else 0 for c in range(2)] for v in ids], dtype=np.int32)


test = [503, 502, 504]
g = collections.defaultdict(list)
for v in range(505):
    g[v] = [(v + 1) % 505]
parts = [feats(range(2)), feats(test), feats(range(502)), onehot(range(2)), onehot(test), onehot(range(502)), g]
put("planetoid_fuzz", "cora", pack(*[pickle.dumps(p, protocol=2) for p in parts], "\n".join(map(str, test)).encode()))
for i, p in enumerate([feats(test), onehot(test), g, [1, (2, 3.5), {"a": None}], True]):
    put("pickle_fuzz", "p%d" % i, pickle.dumps(p, protocol=2))
put("pickle_fuzz", "p4", pickle.dumps(feats(range(3)), protocol=4))
