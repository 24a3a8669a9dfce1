"""The scores of a sparsifier (the sparsify_eval and sliding steps): its test family, the reference and the errors.

  * ``make_test_family(H, seed)`` -- test vectors X (Gaussian, singletons, communities, unions, low
    eigenvectors, planted bisection), kinds coded by ``KIND_NAMES``.
  * ``reference_stats(H, X)`` + ``evaluate_sparsifier(H, idx, weight, X, ref=...)`` -> eps_hat
    (family + projected-gradient ascent; a LOWER bound on the true hypergraph eps), eps_exact for graphs
    (generalized eigenvalues), bisection error, min-cut ratio (r <= 3 via networkx.stoer_wagner).
  * ``graph_spectral_eps``, ``min_cut_value``, ``brute_force_min_cut``, ``evaluate_sliding``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from .hypergraph import (_rng, clique_laplacian, coalesce, hyper_energy, hyper_energy_grad, hyperedge_pairs,
                         pair_laplacian, subhypergraph)
from .methods import uniform_reservoir

KIND_NAMES = ("gauss", "singleton", "community", "union", "eigvec", "bisection")


def make_test_family(H: dict, seed=0, n_gauss: int = 200, n_unions: int = 100, n_eig: int = 20,
                     flip: float = 0.1) -> dict:
    """Test vectors (spec 2.3 Metrics): ``n_gauss`` Gaussian x, the n singletons 1_v, the k community
    indicators, ``n_unions`` random unions of communities (a random non-empty proper subset of communities,
    then each vertex flipped with prob ``flip``; the spec does not say what is united), the ``n_eig`` lowest
    non-trivial eigenvectors of the clique-expansion Laplacian (pair weight w_e), and the planted bisection.

    Returns dict(X (n, p), kind (p,) int codes into ``KIND_NAMES``)."""
    rng = _rng(seed)
    n = int(H["n"])
    comm = np.asarray(H.get("community", np.zeros(n, np.int64)))
    k = int(comm.max()) + 1
    cols, kinds = [], []

    def put(M, kind):
        M = np.asarray(M, float).reshape(n, -1)
        cols.append(M)
        kinds.extend([KIND_NAMES.index(kind)] * M.shape[1])

    put(rng.standard_normal((n, n_gauss)), "gauss")
    put(np.eye(n), "singleton")
    if k >= 2:
        put((comm[:, None] == np.arange(k)[None, :]).astype(float), "community")
        U = np.zeros((n, n_unions))
        for j in range(n_unions):
            sub = rng.random(k) < 0.5
            while sub.all() or not sub.any():
                sub = rng.random(k) < 0.5
            x = sub[comm]
            x ^= rng.random(n) < flip
            U[:, j] = x
        put(U, "union")
    L = clique_laplacian(H["verts"], H["weights"], n)
    _, vecs = np.linalg.eigh(L)
    put(vecs[:, 1:1 + n_eig], "eigvec")
    if "side" in H:
        put(np.asarray(H["side"], float), "bisection")
    return {"X": np.concatenate(cols, axis=1), "kind": np.asarray(kinds, dtype=np.int64)}


def _is_graph(verts) -> bool:
    return int((np.asarray(verts) >= 0).sum(axis=1).max(initial=0)) <= 2


def graph_spectral_eps(L: np.ndarray, L_hat: np.ndarray, tol: float = 1e-9) -> float:
    """Exact graph eps: ``max(|lambda_max - 1|, |1 - lambda_min|)`` of ``L^{+1/2} L_hat L^{+1/2}`` on range(L)
    (plus 1 if L_hat has energy outside range(L))."""
    vals, vecs = np.linalg.eigh(L)
    keep = vals > tol * max(vals.max(), 1e-300)
    P = vecs[:, keep] / np.sqrt(vals[keep])
    lam = np.linalg.eigvalsh(P.T @ L_hat @ P)
    eps = max(abs(lam.max() - 1.0), abs(1.0 - lam.min()))
    N = vecs[:, ~keep]
    if N.size and np.abs(N.T @ L_hat @ N).max() > tol * max(np.abs(L_hat).max(), 1e-300):
        eps = max(eps, float("inf"))
    return float(eps)


def min_cut_value(verts, weights, n: int) -> float:
    """Exact global min cut of a hypergraph of rank <= 3: the cut function equals that of the clique
    expansion with pair weights w_e (|e| = 2) and w_e / 2 (|e| = 3) -> ``networkx.stoer_wagner``. A
    disconnected hypergraph (or isolated vertex) has min cut 0. Rank > 3: ``brute_force_min_cut`` when
    n <= 20, else NaN."""
    V = np.asarray(verts, dtype=np.int64)
    if V.shape[0] and (V >= 0).sum(axis=1).max() > 3:
        return brute_force_min_cut(V, weights, n) if n <= 20 else float("nan")
    U, W, valid = hyperedge_pairs(V)
    c = 1.0 / np.maximum((V >= 0).sum(axis=1) - 1, 1)
    Z = np.where(valid, (np.asarray(weights, float) * c)[:, None], 0.0)
    A = pair_laplacian(U, W, Z, n)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    iu, ju = np.nonzero(np.triu(-A, 1) > 0)
    G.add_weighted_edges_from((int(a), int(b), float(-A[a, b])) for a, b in zip(iu, ju))
    if n < 2 or not nx.is_connected(G):
        return 0.0
    val, _ = nx.stoer_wagner(G)
    return float(val)


def brute_force_min_cut(verts, weights, n: int) -> float:
    """Min over all 2^(n-1)-1 proper vertex subsets S (vertex n-1 outside) of the hypergraph cut
    ``sum_{e cut by S} w_e`` (= Q_H(1_S)). For tests / tiny n only."""
    if n > 22:
        raise ValueError("brute force only for n <= 22")
    codes = np.arange(1, 2 ** (n - 1))
    S = ((codes[None, :] >> np.arange(n - 1)[:, None]) & 1).astype(float)
    S = np.vstack([S, np.zeros((1, codes.size))])
    best = np.inf
    for s in range(0, codes.size, 4096):
        best = min(best, float(hyper_energy(verts, weights, S[:, s:s + 4096]).min()))
    return best


def reference_stats(H: dict, X=None) -> dict:
    """Everything about the full H that evaluation reuses: coalesced H, Q_H on X, graph Laplacian
    (rank 2), exact min cut (rank <= 3)."""
    Vc, wc = coalesce(H["verts"], H["weights"])
    n = int(H["n"])
    ref = {"verts": Vc, "weights": wc, "n": n, "graph": _is_graph(Vc)}
    if X is not None:
        ref["QX"] = hyper_energy(Vc, wc, X)
    if ref["graph"]:
        ref["L"] = clique_laplacian(Vc, wc, n)
    ref["min_cut"] = min_cut_value(Vc, wc, n) if (Vc >= 0).sum(axis=1).max(initial=0) <= 3 else float("nan")
    return ref


def _ascent(ref, Vh, wh, X0, sign, steps, etas=(0.5, 0.2, 0.05, 0.01)):
    """Projected (normalized) gradient ascent on g(x) = sign * (Q_hat(x)/Q_H(x) - 1) from columns of X0;
    x is kept mean-zero, unit norm (g is shift and scale invariant). Returns best |ratio - 1| found."""
    X = X0 - X0.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    p = X.shape[1]
    best = np.zeros(p)
    for _ in range(steps):
        QH, GH = hyper_energy_grad(ref["verts"], ref["weights"], X)
        Qh, Gh = hyper_energy_grad(Vh, wh, X)
        QH = np.maximum(QH, 1e-300)
        g = sign * (Qh / QH - 1.0)
        best = np.maximum(best, np.abs(Qh / QH - 1.0))
        D = sign * (Gh * QH - Qh * GH) / QH ** 2
        D -= D.mean(axis=0)
        D /= np.maximum(np.linalg.norm(D, axis=0), 1e-300)
        cands = np.concatenate([X + eta * D for eta in etas], axis=1)
        cands -= cands.mean(axis=0)
        cands /= np.linalg.norm(cands, axis=0)
        cQH = hyper_energy(ref["verts"], ref["weights"], cands)
        cQh = hyper_energy(Vh, wh, cands)
        ok = cQH > 1e-12 * max(cQH.max(), 1e-300)
        cg = np.tile(sign, len(etas)) * (cQh / np.maximum(cQH, 1e-300) - 1.0)
        cg = np.where(ok, cg, -np.inf).reshape(len(etas), p)
        j = cg.argmax(axis=0)
        improve = cg[j, np.arange(p)] > g
        if not improve.any():
            break
        newX = cands.reshape(X.shape[0], len(etas), p)[:, j, np.arange(p)]
        X = np.where(improve[None, :], newX, X)
        best = np.maximum(best, np.where(improve, np.abs(cg[j, np.arange(p)]), 0.0))
    return float(best.max(initial=0.0))


def evaluate_sparsifier(H: dict, idx, weight, X, seed=0, ascent_steps: int = 20, ascent_starts: int = 5,
                        ref: dict | None = None, kind=None) -> dict:
    """Quality of the sparsifier ``(idx, weight)`` of H (spec 2.3 Metrics).

    * ``eps_family = max_{x in X, Q_H(x) > 0} |Q_hat(x)/Q_H(x) - 1|``; ``eps_hat`` = max of that and
      ``ascent_steps`` projected-gradient ascent steps on |ratio - 1| from the ``ascent_starts`` worst x
      (a lower bound on the true hypergraph eps);
    * ``eps_exact`` (rank 2 only, else NaN): ``graph_spectral_eps``;
    * ``bisection_err`` = |ratio - 1| on the planted bisection indicator (NaN without ``side``);
    * ``min_cut``, ``min_cut_hat``, ``min_cut_ratio`` (rank <= 3, else NaN);
    * ``worst_kind`` (name of the test-vector kind attaining eps_family, needs ``kind``).
    """
    ref = reference_stats(H, X) if ref is None else ref
    n = int(H["n"])
    idx = np.asarray(idx, dtype=np.int64)
    Vh, wh = coalesce(np.asarray(H["verts"])[idx], np.asarray(weight, float))
    X = np.asarray(X, float)
    QH = ref["QX"] if "QX" in ref else hyper_energy(ref["verts"], ref["weights"], X)
    Qh = hyper_energy(Vh, wh, X)
    ok = QH > 1e-12 * QH.max()
    dev = np.where(ok, Qh / np.where(ok, QH, 1.0) - 1.0, 0.0)
    err = np.abs(dev)
    eps_family = float(err.max(initial=0.0))
    out = {"eps_family": eps_family, "eps_hat": eps_family}
    if kind is not None and err.size:
        out["worst_kind"] = KIND_NAMES[int(np.asarray(kind)[int(err.argmax())])]
    if ascent_steps > 0 and err.size:
        top = np.argsort(-err)[:ascent_starts]
        sign = np.where(dev[top] >= 0, 1.0, -1.0)
        out["eps_hat"] = max(eps_family, _ascent(ref, Vh, wh, X[:, top], sign, ascent_steps))
    out["eps_exact"] = (graph_spectral_eps(ref["L"], clique_laplacian(Vh, wh, n)) if ref["graph"]
                        else float("nan"))
    if "side" in H:
        x = np.asarray(H["side"], float)
        q = hyper_energy(ref["verts"], ref["weights"], x)
        out["bisection_err"] = float(abs(hyper_energy(Vh, wh, x) / q - 1.0)) if q > 0 else float("nan")
    else:
        out["bisection_err"] = float("nan")
    mc = ref.get("min_cut", float("nan"))
    if np.isfinite(mc):
        mch = min_cut_value(Vh, wh, n)
        out.update(min_cut=float(mc), min_cut_hat=float(mch), min_cut_ratio=float(mch / mc) if mc > 0 else
                   float("nan"))
    else:
        out.update(min_cut=float("nan"), min_cut_hat=float("nan"), min_cut_ratio=float("nan"))
    return out


def evaluate_sliding(H: dict, res: dict, seed=0, ascent_steps: int = 20, control_seed=1, **family_kw) -> dict:
    """eps_hat of each sliding-window snapshot against the true window ``[T - W, T)`` (test family built
    per window), and of its negative control: a uniform sample of the window of the same size (weights
    scaled by window size / sample size; drawn from ``control_seed``, so the method's own scores do not depend
    on it), scored on the same test family.

    Returns dict(query_times, eps_hat (Q,), eps_family (Q,), eps_exact (Q,; NaN unless rank 2), eps_hat_uniform
    (Q,), stored (Q,), stored_frac_window (Q,), eps_hat_max, stored_frac_max)."""
    ctrl = _rng(control_seed)
    W = int(res["window"])
    ptr = res["snap_ptr"]
    eh, ef, ex, eu, st = [], [], [], [], []
    for q, T in enumerate(res["query_times"]):
        lo = max(0, int(T) - W)
        win = subhypergraph(H, np.arange(lo, int(T)))
        sidx = res["snap_idx"][ptr[q]:ptr[q + 1]] - lo
        fam = make_test_family(win, seed, **family_kw)
        ref = reference_stats(win, fam["X"])
        ev = evaluate_sparsifier(win, sidx, res["snap_weight"][ptr[q]:ptr[q + 1]], fam["X"], seed,
                                 ascent_steps=ascent_steps, ref=ref)
        uidx = uniform_reservoir(int(T) - lo, sidx.size, ctrl)
        uni = evaluate_sparsifier(win, uidx, win["weights"][uidx] * ((int(T) - lo) / max(uidx.size, 1)), fam["X"],
                                  ascent_steps=ascent_steps, ref=ref)
        eh.append(ev["eps_hat"])
        ef.append(ev["eps_family"])
        ex.append(ev["eps_exact"])
        eu.append(uni["eps_hat"])
        st.append(sidx.size)
    st = np.asarray(st)
    return {"query_times": np.asarray(res["query_times"]), "eps_hat": np.asarray(eh), "eps_family": np.asarray(ef),
            "eps_exact": np.asarray(ex), "eps_hat_uniform": np.asarray(eu),
            "stored": st, "stored_frac_window": st / W, "eps_hat_max": float(max(eh, default=float("nan"))),
            "stored_frac_max": float((st / W).max(initial=0.0))}
