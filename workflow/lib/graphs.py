"""Generic graph pieces: adjacency building (kNN, edge lists), normalisation, hop distances, a small GCN and a GAE.

Graphs are undirected, unweighted ``scipy.sparse.csr_matrix`` adjacencies without self loops. The torch
models run on one thread (the caller's Step sets it) and are deterministic given their seed.
"""
from __future__ import annotations


import numpy as np
import scipy.sparse as sp


# ---------------------------------------------------------------- adjacency
def adjacency(edges: np.ndarray, n: int) -> sp.csr_matrix:
    """Symmetric 0/1 adjacency of an edge list [m, 2]; duplicates merged, self loops dropped."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    edges = edges[edges[:, 0] != edges[:, 1]]
    a = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n)).tocsr()
    a = ((a + a.T) > 0).astype(np.float64)
    return sp.csr_matrix(a)


def edge_list(a: sp.spmatrix) -> np.ndarray:
    """Each undirected edge once, as rows (i, j) with i < j."""
    u = sp.triu(a, k=1).tocoo()
    return np.stack([u.row, u.col], axis=1).astype(np.int64)


def knn_graph(x: np.ndarray, k: int) -> sp.csr_matrix:
    """Symmetrised k-nearest-neighbour graph (Euclidean; i~j if either is among the other's k nearest)."""
    from sklearn.neighbors import kneighbors_graph

    if not 1 <= k < len(x):
        raise ValueError(f"knn_graph: k={k} must be in [1, n-1] for n={len(x)} points")
    a = kneighbors_graph(x, n_neighbors=k, mode="connectivity", include_self=False)
    return sp.csr_matrix(((a + a.T) > 0).astype(np.float64))


def largest_component(a: sp.spmatrix) -> np.ndarray:
    """Indices of the nodes of the largest connected component, ascending."""
    from scipy.sparse.csgraph import connected_components

    _, label = connected_components(a, directed=False)
    return np.flatnonzero(label == np.bincount(label).argmax())


def sym_norm(a: sp.spmatrix, self_loops: bool) -> sp.csr_matrix:
    """D^{-1/2} (A [+ I]) D^{-1/2}; an isolated node's row stays zero (no division by zero)."""
    a = sp.csr_matrix(a, dtype=np.float64)
    if self_loops:
        a = a + sp.eye(a.shape[0], format="csr")
    d = np.asarray(a.sum(axis=1)).ravel()
    inv = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
    return sp.csr_matrix(sp.diags(inv) @ a @ sp.diags(inv))


def hop_distance(a: sp.spmatrix, sources: np.ndarray) -> np.ndarray:
    """Hop distance of every node to the nearest source, per column of the boolean [n, c] `sources`.

    Breadth-first search on all columns at once (one sparse product per level); unreachable = inf.
    """
    sources = np.asarray(sources, dtype=bool)
    dist = np.where(sources, 0.0, np.inf)
    frontier = sources.astype(np.float64)
    level = 0
    while frontier.any():
        level += 1
        reached = (a @ frontier > 0) & np.isinf(dist)
        dist[reached] = level
        frontier = reached.astype(np.float64)
    return dist


def edge_homophily(a: sp.spmatrix, y: np.ndarray) -> float:
    e = edge_list(a)
    return float(np.mean(y[e[:, 0]] == y[e[:, 1]])) if len(e) else float("nan")


# ---------------------------------------------------------------- torch models
def torch_sparse(m: sp.spmatrix):
    import torch

    c = sp.coo_matrix(m)
    idx = torch.from_numpy(np.vstack([c.row, c.col]).astype(np.int64))
    return torch.sparse_coo_tensor(idx, torch.from_numpy(c.data.astype(np.float32)), c.shape, check_invariants=False).coalesce()


def make_gcn(d_in: int, hidden: int, d_out: int, layers: int, dropout: float):
    """Kipf & Welling GCN: (layers - 1) x [Â·Linear, ReLU, dropout], then Â·Linear to d_out."""
    import torch
    import torch.nn as nn

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            dims = [d_in] + [hidden] * (layers - 1) + [d_out]
            self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
            self.dropout = dropout

        def forward(self, a_hat, x):
            for i, lin in enumerate(self.lins):
                x = nn.functional.dropout(x, self.dropout, self.training)
                x = torch.sparse.mm(a_hat, lin(x))
                if i < len(self.lins) - 1:
                    x = torch.relu(x)
            return x

    return GCN()


def train_node_classifier(a: sp.spmatrix, x: np.ndarray, y: np.ndarray, train: np.ndarray, val: np.ndarray,
                          test: np.ndarray, *, hidden: int, layers: int, dropout: float, lr: float,
                          weight_decay: float, epochs: int, patience: int, seed: int) -> dict:
    """Full-batch GCN node classification; the epoch of best validation accuracy decides (weights and logits);
    training stops after `patience` epochs without a better validation accuracy.

    Returns val_acc, test_acc at that epoch, its logits [n, C] and the epoch, and the logits of the last epoch run.
    """
    import torch

    torch.manual_seed(seed)
    a_hat = torch_sparse(sym_norm(a, self_loops=True))
    xt, yt = torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long)
    model = make_gcn(x.shape[1], hidden, int(y.max()) + 1, layers, dropout)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    best = {"val_acc": -1.0}
    for epoch in range(epochs):
        model.train()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(a_hat, xt)[train], yt[train])
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            logits = model(a_hat, xt)
        pred = logits.argmax(1)
        val_acc = float((pred[val] == yt[val]).float().mean())
        if val_acc > best["val_acc"]:
            best = {"val_acc": val_acc, "test_acc": float((pred[test] == yt[test]).float().mean()),
                    "logits": logits.numpy().copy(), "epoch": epoch}
        elif epoch - best["epoch"] >= patience:
            break
    return best | {"last_logits": logits.numpy().copy()}


def split_edges(a: sp.spmatrix, val_frac: float, test_frac: float, rng: np.random.Generator) -> dict:
    """Random link split: train/val/test positive edges, equally many val/test non-edges, the train graph."""
    n = a.shape[0]
    e = edge_list(a)[rng.permutation(len(edge_list(a)))]
    n_val, n_test = int(round(val_frac * len(e))), int(round(test_frac * len(e)))
    val, test, train = e[:n_val], e[n_val:n_val + n_test], e[n_val + n_test:]
    existing = set(map(tuple, e)) | {(j, i) for i, j in e}
    neg = set()
    while len(neg) < n_val + n_test:
        i, j = rng.integers(0, n, 2)
        if i != j and (i, j) not in existing and (min(i, j), max(i, j)) not in neg:
            neg.add((min(i, j), max(i, j)))
    neg = np.array(sorted(neg), dtype=np.int64)[rng.permutation(len(neg))]
    return {"train": train, "val": val, "test": test, "val_neg": neg[:n_val], "test_neg": neg[n_val:],
            "a_train": adjacency(train, n)}


def train_link_predictor(split: dict, x: np.ndarray, *, hidden: int, out: int, lr: float, epochs: int, seed: int) -> dict:
    """GAE (Kipf & Welling 2016): 2-layer GCN encoder, inner-product decoder, BCE on train edges vs fresh
    random non-edges each epoch. The epoch of best validation AUC decides; returns val/test AUC and AP."""
    import torch
    from sklearn.metrics import average_precision_score, roc_auc_score

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    a_hat = torch_sparse(sym_norm(split["a_train"], self_loops=True))
    xt = torch.as_tensor(x, dtype=torch.float32)
    n = x.shape[0]
    enc = make_gcn(x.shape[1], hidden, out, 2, 0.0)
    opt = torch.optim.Adam(enc.parameters(), lr=lr)
    pos = torch.as_tensor(split["train"])

    def score(z, pairs):
        pairs = torch.as_tensor(pairs)
        return (z[pairs[:, 0]] * z[pairs[:, 1]]).sum(1)

    def metrics(z, p, q):
        s = torch.sigmoid(torch.cat([score(z, p), score(z, q)])).numpy()
        lab = np.r_[np.ones(len(p)), np.zeros(len(q))]
        return roc_auc_score(lab, s), average_precision_score(lab, s)

    best = {"val_auc": -1.0}
    for epoch in range(epochs):
        enc.train()
        opt.zero_grad()
        z = enc(a_hat, xt)
        neg = torch.randint(0, n, pos.shape, generator=gen)
        loss = (torch.nn.functional.binary_cross_entropy_with_logits(score(z, pos), torch.ones(len(pos)))
                + torch.nn.functional.binary_cross_entropy_with_logits(score(z, neg), torch.zeros(len(neg))))
        loss.backward()
        opt.step()
        if epoch % 5 == 4 or epoch == epochs - 1:  # validation every 5 epochs: AUC costs more than a step
            enc.eval()
            with torch.no_grad():
                z = enc(a_hat, xt)
            val_auc, val_ap = metrics(z, split["val"], split["val_neg"])
            if val_auc > best["val_auc"]:
                test_auc, test_ap = metrics(z, split["test"], split["test_neg"])
                best = {"val_auc": val_auc, "val_ap": val_ap, "test_auc": test_auc, "test_ap": test_ap, "epoch": epoch}
    return best
