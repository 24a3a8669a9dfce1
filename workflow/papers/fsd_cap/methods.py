"""FSD-CAP and its baselines as small pure functions (numpy / scipy.sparse; the GCNs live in workflow/lib/graphs).

Notation: A the 0/1 adjacency (csr, no self loops), X [n, D] the true features, M [n, D] the boolean
observed-mask (True = observed). Every imputer returns a full [n, D] matrix that equals X where M is True.

FSD, stage 1 (fsdcap.py): out = X ⊙ M, prev = out, region R = known nodes (per feature column in uniform mode),
hop = 1. Repeat: S = hop-hop neighbourhood of R; stop once R stopped growing (after one more round); on A_S
    T_γ = rownorm((D_S^{-1/2} A_S D_S^{-1/2})^{∘γ}),
iterate K times  out[S] ← T_γ out;  out[S] += λ·prev[S];  out[known] = X[known];
then prev[S] = out[S] / ‖out[S]‖_F (per column in uniform mode); R ← S; hop ← hop + 1.
For an unweighted graph the d_i factor of T_γ cancels in the row normalisation:
    (T_γ z)_i = Σ_j A_ij d_j^{-γ/2} z_j / Σ_j A_ij d_j^{-γ/2},   d = degrees inside S,
which vectorises over columns with an [n, c] region mask. With R_0 = known and R_t = S_t, the region after
hop t is {dist(·, known) ≤ 1 + 2 + … + t}: computed once from BFS distances.

CAP, stage 2 (utilsDiff.oursDiff): a pre-GNN on the stage-1 features gives pseudo-labels ŷ (true labels on
the labelled nodes the imputer may use, best-validation predictions elsewhere) and confidences
c_i = max softmax(z_i/T) (logits of the pre-GNN's last epoch, as the official pred_y);
neighbourhood-entropy weights w_i = 1 − H(hist ŷ over N(i) ∪ {i}) / log(|N(i)| + 1); class prototypes
m_c = Σ_{ŷ_i=c} w_i z_i / Σ_{ŷ_i=c} w_i; missing entries only: z_i ← c_i z_i + (1 − c_i) m_{ŷ_i}.

Label protocol. The official code puts the true labels of the training AND all validation nodes into ŷ and then
selects models on those same validation nodes, whose imputed features now carry their labels. Here the validation
nodes are split once per seed: `val_cap`, whose labels the imputer may use (its pre-GNN is also selected there),
and `val_sel`, which only the downstream model selection sees (every method selects on it). The official use
(`fsd_cap_official`: all validation labels in ŷ) and training labels only (`cap_train_labels_only`) are variants.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from workflow.lib import graphs

MASKS = ("structural", "uniform")


# ---------------------------------------------------------------- data: contextual SBM, splits, masks
def csbm(n: int, classes: int, avg_degree: float, homophily: float, dim: int, words: int, mix: float,
         pareto: float, topic_alpha: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Degree-corrected contextual SBM with bag-of-words features; returns (edges [m, 2], X [n, D] 0/1, y [n]).

    Degree propensity θ ~ 1 + Pareto(pareto); each of n·deg/2 edges picks i ∝ θ, then j ∝ θ inside y_i's class
    with probability `homophily`, else among the other classes. Each node draws `words` distinct words from
    mix·topic_{y} + (1 − mix)·background (topics ~ Dir(topic_alpha), background ~ Dir(1)).
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    theta = 1.0 + rng.pareto(pareto, n)
    m = int(round(n * avg_degree / 2))
    p_all = theta / theta.sum()
    src = rng.choice(n, m, p=p_all)
    same = rng.random(m) < homophily
    dst = np.empty(m, dtype=np.int64)
    for c in range(classes):
        inside, outside = np.flatnonzero(y == c), np.flatnonzero(y != c)
        rows = y[src] == c
        for pick, pool in ((rows & same, inside), (rows & ~same, outside)):
            w = theta[pool] / theta[pool].sum()
            dst[pick] = rng.choice(pool, pick.sum(), p=w)
    topics = rng.dirichlet(np.full(dim, topic_alpha), classes)
    background = rng.dirichlet(np.ones(dim))
    x = np.zeros((n, dim))
    for i in range(n):
        p = mix * topics[y[i]] + (1 - mix) * background
        x[i, rng.choice(dim, words, replace=False, p=p / p.sum())] = 1.0
    return np.stack([src, dst], axis=1), x, y


def keep_largest_component(a: sp.spmatrix, x: np.ndarray, y: np.ndarray):
    keep = graphs.largest_component(a)
    return sp.csr_matrix(a[keep][:, keep]), x[keep], y[keep]


def per_class_split(y: np.ndarray, dev: int, train_per_class: int, seed: int, cap_val_frac: float = 0.5) -> dict:
    """As the official set_per_class_train_val_test_split: `dev` random development nodes, `train_per_class` of
    each class from them for training, the rest of dev for validation, all other nodes for test. The validation
    nodes are then split at random: `val_cap` (a `cap_val_frac` share; labels the imputer may use) and `val_sel`
    (the rest; model selection only). train/val/test are those of the official split for the same seed."""
    rng = np.random.default_rng(seed)
    if dev >= len(y):
        raise ValueError(f"split: dev={dev} must be < n={len(y)} nodes (lower fsd_cap.split.dev)")
    perm = rng.permutation(len(y))
    dev_idx = perm[:dev]
    train = np.concatenate([rng.permutation(dev_idx[y[dev_idx] == c])[:train_per_class] for c in np.unique(y)])
    val = np.setdiff1d(dev_idx, train)
    test = perm[dev:]
    shuffled = rng.permutation(val)  # drawn after the official split, so train/val/test do not change
    cut = int(round(cap_val_frac * len(val)))
    if not 0 < cut < len(val):
        raise ValueError(f"split: cap_val_frac={cap_val_frac} leaves one validation part empty ({len(val)} nodes)")
    return {"train": np.sort(train), "val": np.sort(val), "val_cap": np.sort(shuffled[:cut]),
            "val_sel": np.sort(shuffled[cut:]), "test": np.sort(test)}


def missing_mask(shape: tuple[int, int], kind: str, rate: float, seed: int) -> np.ndarray:
    """Observed-mask as get_missing_feature_mask: structural = a node's whole row missing w.p. `rate`;
    uniform = each entry missing w.p. `rate`. True = observed."""
    rng = np.random.default_rng(seed)
    if kind == "structural":
        return np.repeat(rng.random((shape[0], 1)) >= rate, shape[1], axis=1)
    if kind == "uniform":
        return rng.random(shape) >= rate
    raise ValueError(f"missing_mask: unknown kind {kind!r}; use one of {MASKS}")


# ---------------------------------------------------------------- simple imputers
def zero_impute(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, x, 0.0)


def mean_impute(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Missing entries = the column mean of its observed entries (0 for a column with none)."""
    count = mask.sum(0)
    mean = np.where(count > 0, np.where(mask, x, 0).sum(0) / np.maximum(count, 1), 0.0)
    return np.where(mask, x, mean[None, :])


def feature_propagation(a: sp.spmatrix, x: np.ndarray, mask: np.ndarray, iterations: int) -> np.ndarray:
    """FP (Rossi et al. 2022): out ← D^{-1/2} A D^{-1/2} out, then reset the observed entries; `iterations` times."""
    a_n = graphs.sym_norm(a, self_loops=False)
    out = np.where(mask, x, 0.0)
    for _ in range(iterations):
        out = np.where(mask, x, a_n @ out)
    return out


def weighted_average_step(a: sp.spmatrix, weight: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Σ_j A_ij w_j z_j / Σ_j A_ij w_j, Σ_j A_ij w_j) per column; 0 where the denominator is 0."""
    den = a @ weight
    num = a @ (weight * out)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0), den


def column_groups(mask: np.ndarray, mode: str) -> np.ndarray:
    """[n, c] known-node mask: one shared column in structural mode (whole rows), one per feature in uniform mode."""
    return mask.any(axis=1, keepdims=True) if mode == "structural" else mask


def pcfi_lite(a: sp.spmatrix, x: np.ndarray, mask: np.ndarray, iterations: int, alpha: float, mode: str) -> np.ndarray:
    """PCFI core (Um et al. 2023) without its inter-channel stage: channel-wise pseudo-confidence
    ξ_{i,c} = α^{dist(i, known_c)} weights the propagation, W_ij ∝ A_ij α^{dist_j − dist_i + 1} (row-normalised,
    so the i factor cancels: a neighbour average weighted by α^{dist_j}); observed entries reset each step."""
    dist = graphs.hop_distance(a, column_groups(mask, mode))
    weight = np.where(np.isfinite(dist), alpha ** np.where(np.isfinite(dist), dist, 0), 0.0)
    weight = np.broadcast_to(weight, x.shape)
    out = np.where(mask, x, 0.0)
    for _ in range(iterations):
        avg, den = weighted_average_step(a, weight, out)
        out = np.where(mask, x, np.where(den > 0, avg, out))
    return out


# ---------------------------------------------------------------- FSD (stage 1)
def fractional_weights(a: sp.spmatrix, region: np.ndarray, gamma: float) -> np.ndarray:
    """d_j^{-γ/2} on nodes j of the region S (degrees inside S), 0 elsewhere: T_γ = neighbour average with them."""
    r = region.astype(np.float64)
    deg = a @ r
    return np.where(region & (deg > 0), np.power(np.where(deg > 0, deg, 1.0), -gamma / 2.0), 0.0)


def fractional_operator(a: sp.spmatrix, nodes: np.ndarray, gamma: float) -> np.ndarray:
    """The dense T_γ = rownorm((D_S^{-1/2} A_S D_S^{-1/2})^{∘γ}) of the subgraph on `nodes` (for tests and checks)."""
    sub = a[nodes][:, nodes].toarray()
    d = sub.sum(1)
    inv = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0)
    norm = (inv[:, None] * sub * inv[None, :])
    powered = np.where(sub > 0, np.power(np.where(sub > 0, norm, 1.0), gamma), 0.0)
    rows = powered.sum(1, keepdims=True)
    return np.divide(powered, rows, out=np.zeros_like(powered), where=rows > 0)


def region_schedule(dist: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The hops of the expansion as (region S_t [n, c], columns diffused at this hop [c]).

    S_t = hop-t neighbourhood of R_{t-1} = S_{t-1} (R_0 = known), i.e. {dist <= 1 + ... + t}. As in the official
    loop, a column runs hop t when t = 1 or its region grew at hop t - 1: once saturated, a column gets one more
    round of diffusion on its (whole-component) region, then stops.
    """
    hops, before, region, reach, t = [], None, dist <= 0, 0, 1
    while True:
        active = np.ones(dist.shape[1], dtype=bool) if before is None else (region != before).any(axis=0)
        if not active.any():
            return hops
        reach += t
        s = dist <= reach
        hops.append((s, active))
        before, region, t = region, s, t + 1


def fsd_stage1(a: sp.spmatrix, x: np.ndarray, mask: np.ndarray, iterations: int, gamma: float, lam: float,
               mode: str) -> np.ndarray:
    """Graph-distance-guided subgraph expansion with fractional diffusion (stage 1 of FSD-CAP)."""
    known = column_groups(mask, mode)
    dist = graphs.hop_distance(a, known)
    out = np.where(mask, x, 0.0)
    prev = out.copy()
    for s, grew in region_schedule(dist):                       # grew: the columns diffused at this hop
        upd = np.broadcast_to(s & grew[None, :], x.shape)         # rows of S in those columns are diffused
        weight = np.broadcast_to(fractional_weights(a, s, gamma), x.shape)
        for _ in range(iterations):
            avg, _ = weighted_average_step(a, weight, out)
            out = np.where(upd, avg + lam * prev, out)
            out = np.where(mask, x, out)
        s_full = np.broadcast_to(s, x.shape)
        inside = np.where(s_full, out, 0.0)
        norm = np.sqrt((inside ** 2).sum()) if mode == "structural" else np.sqrt((inside ** 2).sum(0, keepdims=True))
        prev = np.where(s_full & grew[None, :], inside / np.where(norm > 0, norm, 1.0), prev)
    return out


# ---------------------------------------------------------------- CAP (stage 2)
def softmax_confidence(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = logits / temperature
    z = z - z.max(1, keepdims=True)
    p = np.exp(z)
    return (p / p.sum(1, keepdims=True)).max(1)


def pseudo_labels(logits: np.ndarray, y: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """True labels on the `labelled` nodes, the pre-GNN's argmax elsewhere."""
    yhat = logits.argmax(1)
    yhat[labelled] = y[labelled]
    return yhat


def entropy_weights(a: sp.spmatrix, yhat: np.ndarray, classes: int) -> np.ndarray:
    """w_i = 1 − H(label histogram of ŷ over N(i) ∪ {i}) / log(|N(i)| + 1); an isolated node gets 1."""
    onehot = np.eye(classes)[yhat]
    counts = a @ onehot + onehot
    p = counts / counts.sum(1, keepdims=True)
    ent = -(p * np.log(np.where(p > 0, p, 1.0))).sum(1)
    deg = np.asarray(a.sum(1)).ravel()
    return np.where(deg > 0, 1.0 - ent / np.log(np.where(deg > 0, deg, 1.0) + 1.0), 1.0)


def class_prototypes(z: np.ndarray, yhat: np.ndarray, w: np.ndarray, classes: int) -> np.ndarray:
    """m_c = Σ_{ŷ_i=c} w_i z_i / Σ_{ŷ_i=c} w_i (0 for a class without weight)."""
    onehot = np.eye(classes)[yhat] * w[:, None]
    mass = onehot.sum(0)
    return (onehot.T @ z) / np.where(mass > 0, mass, 1.0)[:, None]


def class_aware_propagation(z: np.ndarray, mask: np.ndarray, yhat: np.ndarray, confidence: np.ndarray,
                            w: np.ndarray, classes: int) -> np.ndarray:
    """Missing entries only: z_i ← c_i z_i + (1 − c_i) m_{ŷ_i}."""
    proto = class_prototypes(z, yhat, w, classes)
    refined = confidence[:, None] * z + (1 - confidence[:, None]) * proto[yhat]
    return np.where(mask, z, refined)


# ---------------------------------------------------------------- FSD-CAP and its variants, sharing their parts
# name -> how it differs from FSD-CAP. labels: whose true labels enter ŷ; gamma: stage-1 exponent (None = params);
# cap: run stage 2; one_class: CAP with every node in one class (the class information removed: the control);
# clusters: CAP with label-free classes, a seeded k-means of the stage-1 features into as many clusters as there are
# classes (the labels made inert: the placebo).
FSD_VARIANTS = {
    "fsd_cap": dict(labels=("train", "val_cap")),
    "stage1_only": dict(cap=False),
    "cap_train_labels_only": dict(labels=("train",)),
    "fsd_cap_official": dict(labels=("train", "val")),           # official: the selection nodes' labels too
    "cap_no_classes": dict(one_class=True),
    "cap_label_free": dict(clusters=True),
    "fsd_gamma0.5": dict(labels=("train", "val_cap"), gamma=0.5),
    "fsd_gamma2": dict(labels=("train", "val_cap"), gamma=2.0),
}
BASELINES = ("full", "zero", "mean", "fp", "pcfi_lite")
METHODS = BASELINES + tuple(FSD_VARIANTS)


def pre_gnn(a: sp.spmatrix, z: np.ndarray, y: np.ndarray, split: dict, gnn: dict, seed: int) -> dict:
    """The pre-GNN of stage 2: trained on the training nodes, its epoch selected on `val_cap` (never on the
    downstream selection nodes)."""
    return graphs.train_node_classifier(a, z, y, split["train"], split["val_cap"], split["test"], seed=seed, **gnn)


def label_free_classes(z: np.ndarray, classes: int, seed: int) -> np.ndarray:
    """Classes that carry no label: k-means (k-means++, 4 starts, seeded) of the stage-1 features into `classes`
    clusters, ids in the order of their first node (only the partition matters to CAP)."""
    from sklearn.cluster import KMeans

    k = max(1, min(classes, len(np.unique(z, axis=0))))
    ids = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(z)
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse].astype(np.int64)


def cap_stage(a: sp.spmatrix, z: np.ndarray, mask: np.ndarray, y: np.ndarray, split: dict, pre: dict,
              variant: dict, temperature: float, seed: int = 0) -> np.ndarray:
    """Stage 2 of one variant on the stage-1 features z, given the pre-GNN's output. With `one_class` every node
    has the same pseudo-label: the prototype is the mean of z and each missing entry moves towards it by the
    same confidences (CAP's pull without its class information). With `clusters` the pseudo-labels are label-free
    classes (`label_free_classes`): no label reaches CAP, whose confidences, weights, prototypes and pull are kept."""
    if variant.get("one_class"):
        yhat, classes = np.zeros(len(y), dtype=np.int64), 1
    elif variant.get("clusters"):
        classes = int(y.max()) + 1
        yhat = label_free_classes(z, classes, seed)
    else:
        labelled = np.concatenate([split[k] for k in variant["labels"]])
        yhat, classes = pseudo_labels(pre["logits"], y, labelled), int(y.max()) + 1
    conf = softmax_confidence(pre["last_logits"], temperature)  # official: pred_y of the last forward pass
    return class_aware_propagation(z, mask, yhat, conf, entropy_weights(a, yhat, classes), classes)


def fsd_family(names, a: sp.spmatrix, x: np.ndarray, mask: np.ndarray, y: np.ndarray, split: dict, mode: str,
               imp: dict, gnn: dict, seed: int) -> tuple[dict, dict]:
    """FSD-CAP variants on one graph and mask: ({name: features}, {name: seconds it would take alone}).

    Stage 1 runs once per γ and the pre-GNN once per stage 1, so variants differ only in what they change
    (a control then differs from the method in its broken part alone)."""
    feats, seconds, stage1, pre = {}, {}, {}, {}
    for name in names:
        v = FSD_VARIANTS[name]
        gamma = imp["gamma"] if v.get("gamma") is None else v["gamma"]
        if gamma not in stage1:
            t0 = time.time()
            stage1[gamma] = (fsd_stage1(a, x, mask, imp["iterations"], gamma, imp["lam"], mode), time.time() - t0)
        z, spent = stage1[gamma]
        if not v.get("cap", True):
            feats[name], seconds[name] = z, spent
            continue
        if gamma not in pre:
            t0 = time.time()
            pre[gamma] = (pre_gnn(a, z, y, split, gnn, seed), time.time() - t0)
        t0 = time.time()
        feats[name] = cap_stage(a, z, mask, y, split, pre[gamma][0], v, imp["temperature"], seed)
        seconds[name] = spent + pre[gamma][1] + time.time() - t0
    return feats, seconds


def baseline(method: str, a: sp.spmatrix, x: np.ndarray, mask: np.ndarray, mode: str, imp: dict) -> np.ndarray:
    """One baseline's features for the downstream model (``full`` = the true features, the reference)."""
    if method == "full":
        return x
    if method == "zero":
        return zero_impute(x, mask)
    if method == "mean":
        return mean_impute(x, mask)
    if method == "fp":
        return feature_propagation(a, x, mask, imp["fp_iterations"])
    if method == "pcfi_lite":
        return pcfi_lite(a, x, mask, imp["fp_iterations"], imp["pcfi_alpha"], mode)
    raise ValueError(f"unknown method {method!r}; use one of {METHODS}")


def impute_all(names, a: sp.spmatrix, x: np.ndarray, mask: np.ndarray, y: np.ndarray, split: dict, mode: str,
               imp: dict, gnn: dict, seed: int) -> tuple[dict, dict]:
    """Every named method's features on one graph and mask, and the seconds each took."""
    unknown = [m for m in names if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; use some of {METHODS}")
    feats, seconds = fsd_family([m for m in names if m in FSD_VARIANTS], a, x, mask, y, split, mode, imp, gnn, seed)
    for m in (m for m in names if m in BASELINES):
        t0 = time.time()
        feats[m] = baseline(m, a, x, mask, mode, imp)
        seconds[m] = time.time() - t0
    return {m: feats[m] for m in names}, {m: seconds[m] for m in names}


def rmse_missing(x: np.ndarray, imputed: np.ndarray, mask: np.ndarray) -> float:
    miss = ~mask
    return float(np.sqrt(np.mean((imputed[miss] - x[miss]) ** 2))) if miss.any() else 0.0
