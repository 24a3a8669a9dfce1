"""Core algorithms for `soft_qd` (Hedayatian & Nikolaidis, Soft QD / SQUAD, arXiv 2512.00810).

Pure functions, deterministic given seeds, no I/O.
  * soft_qd_score            -- S_sigma(theta) = int_[0,1]^m max_n f_n exp(-||b-b_n||^2 / 2 sigma^2) db
  * soft_qd_normalized       -- S / (2 pi sigma^2)^{m/2}  (-> sum_n f_n for distinct points as sigma -> 0)
  * soft_qd_lower_bound      -- S~ = sum f - sum_{i<j} sqrt(f_i f_j) exp(-||b_i-b_j||^2/gamma^2)
  * squad                    -- SQUAD optimiser (batched, kNN repulsion, per-row Adam, logit descriptors)
  * lp_rastrigin / lp_sphere -- LP benchmarks (objective in [0,100], descriptors in [0,1]^m)
  * qd_score_grid / qd_score_cvt / cvt_centroids / vendi_score -- evaluation
  * ribs_cvt_centroids / approx_soft_qd_score -- the paper's evaluation archive and reported Soft QD value
  * run_map_elites / run_cma_mae / run_cma_maega -- thin pyribs (``ribs``) baselines; raise ImportError if ribs missing
"""
from __future__ import annotations

import math

import numpy as np
import torch

LIM = 5.12
SHIFT = 2.048


# --------------------------------------------------------------------------- benchmarks
def _descriptors(x: torch.Tensor, m: int) -> torch.Tensor:
    n, d = x.shape
    if d % m:
        raise ValueError(f"D={d} must be divisible by m={m}")
    xt = torch.where(x.abs() <= LIM, x, LIM / x)
    b = xt.reshape(n, m, d // m).mean(-1)
    return (b + LIM) / (2 * LIM)


def lp_rastrigin(x: torch.Tensor, m: int):
    """LP-Rastrigin. x: (N, D) tensor. Returns (f in [0,100] (N,), b in [0,1]^m (N, m)); differentiable."""
    d = x.shape[1]
    z = x - SHIFT
    raw = 10 * d + (z ** 2 - 10 * torch.cos(2 * math.pi * z)).sum(1)
    zw = -LIM - SHIFT
    worst = d * (10 + zw ** 2 - 10 * math.cos(2 * math.pi * zw))  # raw at x = -5.12 * 1
    f = 100 * (raw - worst) / (0 - worst)
    return f, _descriptors(x, m)


def lp_sphere(x: torch.Tensor, m: int):
    """LP-Sphere. x: (N, D) tensor. Returns (f in [0,100], b in [0,1]^m)."""
    d = x.shape[1]
    raw = ((x - SHIFT) ** 2).sum(1)
    worst = d * (-LIM - SHIFT) ** 2
    f = 100 * (raw - worst) / (0 - worst)
    return f, _descriptors(x, m)


BENCHMARKS = {"rastrigin": lp_rastrigin, "sphere": lp_sphere}


def evaluate_np(benchmark: str, x: np.ndarray, m: int):
    """numpy wrapper: (f (N,), b (N, m)) as float64 arrays."""
    with torch.no_grad():
        f, b = BENCHMARKS[benchmark](torch.as_tensor(np.asarray(x), dtype=torch.float64), m)
    return f.numpy(), b.numpy()


def evaluate_with_jacobian(benchmark: str, x: np.ndarray, m: int):
    """(f (N,), b (N, m), jacobian (N, 1 + m, D)): the objective's gradient, then each descriptor's, per solution.

    Exact gradients of the benchmark's closed form by autograd (the paper's CMA-MAEGA takes them from jax). Rows are
    independent, so the gradient of a column sum gives every row's gradient of that column at once."""
    xt = torch.as_tensor(np.asarray(x), dtype=torch.float64).clone().requires_grad_(True)
    f, b = BENCHMARKS[benchmark](xt, m)
    outputs = [f] + [b[:, j] for j in range(m)]
    jac = [torch.autograd.grad(o.sum(), xt, retain_graph=j < m)[0] for j, o in enumerate(outputs)]
    return f.detach().numpy(), b.detach().numpy(), torch.stack(jac, 1).numpy()


# --------------------------------------------------------------------------- Soft QD score
def _integration_points(m: int, grid_res: int, n_mc: int, seed: int):
    """Midpoint grid on [0,1]^m (if grid_res**m <= 4e6 and n_mc is None) else uniform MC points."""
    if n_mc is None and grid_res ** m <= 4_000_000:
        g = (np.arange(grid_res) + 0.5) / grid_res
        pts = np.stack(np.meshgrid(*([g] * m), indexing="ij"), -1).reshape(-1, m)
        return pts, 1.0 / grid_res ** m
    n = n_mc or 200_000
    pts = np.random.default_rng(seed).random((n, m))
    return pts, 1.0 / n


def soft_qd_score(f, b, sigma: float, grid_res: int = 400, n_mc: int | None = None, seed: int = 0,
                  chunk: int = 200_000, aggregate: str = "max") -> float:
    """Soft QD score S = int_{[0,1]^m} max_n f_n exp(-||b - b_n||^2 / (2 sigma^2)) db.

    f: (N,) fitness (>= 0 expected), b: (N, m) descriptors in [0,1]^m. Grid (midpoint) quadrature when
    grid_res**m <= 4e6, else Monte Carlo with n_mc points (fixed seed -> common random numbers, so the
    estimate is exactly monotone in the set). Empty set -> 0.
    aggregate="mean" replaces the max over solutions by their mean: a deliberately faulty score (not the paper's),
    the negative control that the property checks of claim C4 must catch.
    """
    if aggregate not in ("max", "mean"):
        raise ValueError(f"aggregate must be 'max' (the Soft QD score) or 'mean' (the faulty control), "
                         f"not {aggregate!r}")
    f = np.asarray(f, dtype=np.float64).reshape(-1)
    if len(f) == 0:  # checked before the reshape: an empty (0, m) array cannot be reshaped to (0, -1)
        return 0.0
    b = np.asarray(b, dtype=np.float64).reshape(len(f), -1)
    m = b.shape[1]
    pts, w = _integration_points(m, grid_res, n_mc, seed)
    total = 0.0
    for s in range(0, len(pts), chunk):
        p = pts[s:s + chunk]
        v = np.zeros(len(p))
        for n in range(len(f)):  # loop over solutions keeps memory O(chunk)
            d2 = ((p - b[n]) ** 2).sum(1)
            bump = f[n] * np.exp(-d2 / (2 * sigma ** 2))
            if aggregate == "max":
                np.maximum(v, bump, out=v)
            else:
                v += bump / len(f)
        total += v.sum()
    return float(total * w)


def soft_qd_normalized(f, b, sigma: float, **kw) -> float:
    """S_sigma / (2 pi sigma^2)^{m/2}; tends to sum_n f_n (= QD score of a fine archive) as sigma -> 0."""
    m = np.asarray(b).reshape(len(np.asarray(f).reshape(-1)), -1).shape[1]
    return soft_qd_score(f, b, sigma, **kw) / (2 * math.pi * sigma ** 2) ** (m / 2)


def soft_qd_single_exact(f: float, b, sigma: float) -> float:
    """Closed form of S for a single solution on [0,1]^m (product of 1-D Gaussian integrals)."""
    b = np.atleast_1d(np.asarray(b, dtype=np.float64))
    from scipy.special import erf
    c = sigma * math.sqrt(math.pi / 2)
    per = c * (erf((1 - b) / (math.sqrt(2) * sigma)) + erf(b / (math.sqrt(2) * sigma)))
    return float(f * np.prod(per))


def soft_qd_lower_bound(f, b, gamma2: float) -> float:
    """S~ = sum_n f_n - sum_{i<j} sqrt(f_i^+ f_j^+) exp(-||b_i - b_j||^2 / gamma^2) (claim 2 of the spec)."""
    f = np.asarray(f, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(len(f), -1)
    fp = np.sqrt(np.clip(f, 0, None))
    d2 = ((b[:, None] - b[None]) ** 2).sum(-1)
    k = np.exp(-d2 / gamma2)
    pair = np.triu(np.outer(fp, fp) * k, 1).sum()
    return float(f.sum() - pair)


# --------------------------------------------------------------------------- SQUAD
def _logit(b: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    b = b.clamp(eps, 1 - eps)
    return torch.log(b) - torch.log1p(-b)


def squad(benchmark: str = "rastrigin", D: int = 32, m: int = 4, N: int = 64, epochs: int = 20,
          sigma2: float = 0.1, lr: float = 0.05, batch_size: int = 64, K: int = 16, seed: int = 0,
          betas=(0.9, 0.999), eps: float = 1e-8, x0: np.ndarray | None = None) -> dict:
    """SQUAD: ascend the Soft-QD lower bound with per-solution Adam on mini-batches (port of softqd.py).

    Per batch B (random permutation each epoch): loss = -[sum_{i in B} f_i
      - 1/2 sum_{i in B} sum_{j in kNN(i)} sqrt(f_i^+ f_j^+) k_ij],  k_ij = exp(-||l_i - l_j||^2 / sigma2),
    l = logit(clip(b)) descriptors; neighbours' f, l come detached from a cache; self and k < 1e-6 dropped.
    Adam moments/step counts are kept per row and only batch rows are updated.

    Returns dict: x (N,D) np, f (N,), b (N,m) in [0,1], history {mean_f, max_f, lower_bound} per epoch
    (index 0 = init), n_evals (int, initial N + one re-evaluation per updated solution).
    """
    fn = BENCHMARKS[benchmark]
    g = torch.Generator().manual_seed(seed)
    dt = torch.float64
    if x0 is None:
        x = (torch.rand(N, D, generator=g, dtype=dt) * 2 - 1) * LIM
    else:
        x = torch.as_tensor(np.asarray(x0), dtype=dt).clone()
        N, D = x.shape
    mom1, mom2 = torch.zeros_like(x), torch.zeros_like(x)
    step = torch.zeros(N, dtype=dt)
    with torch.no_grad():
        fc, bc = fn(x, m)
    lc = _logit(bc)
    n_evals = N
    kk = min(K, N - 1)

    def _record(h):
        h["mean_f"].append(float(fc.mean()))
        h["max_f"].append(float(fc.max()))
        h["lower_bound"].append(soft_qd_lower_bound(fc.numpy(), lc.numpy(), sigma2))

    hist = {"mean_f": [], "max_f": [], "lower_bound": []}
    _record(hist)
    for _ in range(epochs):
        perm = torch.randperm(N, generator=g)
        for s in range(0, N, batch_size):
            idx = perm[s:s + batch_size]
            xb = x[idx].clone().requires_grad_(True)
            fb, bb = fn(xb, m)
            lb = _logit(bb)
            loss = -fb.sum()
            if kk > 0:
                with torch.no_grad():
                    d2all = torch.cdist(lc[idx], lc) ** 2
                    d2all[torch.arange(len(idx)), idx] = float("inf")  # drop self
                    nn = d2all.topk(kk, largest=False).indices          # (B, K)
                lj, fj = lc[nn], fc[nn]                                  # detached cache
                k = torch.exp(-((lb[:, None, :] - lj) ** 2).sum(-1) / sigma2)
                k = torch.where(k < 1e-6, torch.zeros_like(k), k)
                rep = torch.sqrt(fb.clamp(min=0)[:, None] * fj.clamp(min=0) + 1e-12) * k
                loss = loss + 0.5 * rep.sum()
            (grad,) = torch.autograd.grad(loss, xb)
            with torch.no_grad():  # manual per-row Adam (minimising loss)
                step[idx] += 1
                mom1[idx] = betas[0] * mom1[idx] + (1 - betas[0]) * grad
                mom2[idx] = betas[1] * mom2[idx] + (1 - betas[1]) * grad ** 2
                t = step[idx][:, None]
                mh = mom1[idx] / (1 - betas[0] ** t)
                vh = mom2[idx] / (1 - betas[1] ** t)
                x[idx] = x[idx] - lr * mh / (vh.sqrt() + eps)
                fn_, bn_ = fn(x[idx], m)  # re-evaluate batch -> cache
                fc[idx], bc[idx], lc[idx] = fn_, bn_, _logit(bn_)
                n_evals += len(idx)
        _record(hist)
    return {"x": x.numpy(), "f": fc.numpy(), "b": bc.numpy(), "history": hist, "n_evals": int(n_evals)}


# --------------------------------------------------------------------------- evaluation
def qd_score_grid(f, b, bins: int, ranges=(0.0, 1.0), offset: float = 0.0) -> dict:
    """Grid archive QD score: per cell keep the best (f - offset); QD = sum over filled cells.
    Returns {qd_score, coverage, n_filled, n_cells}."""
    f = np.asarray(f, dtype=np.float64).reshape(-1)
    b = np.asarray(b, dtype=np.float64).reshape(len(f), -1)
    lo, hi = ranges
    m = b.shape[1]
    ij = np.clip(np.floor((b - lo) / (hi - lo) * bins).astype(np.int64), 0, bins - 1)
    cell = np.ravel_multi_index(ij.T, (bins,) * m) if len(f) else np.zeros(0, np.int64)
    return _archive_stats(f - offset, cell, bins ** m)


def _archive_stats(val, cell, n_cells):
    best = {}
    for c, v in zip(cell.tolist(), val.tolist()):
        if c not in best or v > best[c]:
            best[c] = v
    return {"qd_score": float(sum(best.values())), "coverage": len(best) / n_cells,
            "n_filled": len(best), "n_cells": int(n_cells)}


def cvt_centroids(m: int, n_cells: int, samples: int = 20000, seed: int = 232323) -> np.ndarray:
    """CVT centroids in [0,1]^m by k-means on uniform samples (as ribs.CVTArchive; not bit-identical)."""
    from sklearn.cluster import KMeans
    pts = np.random.default_rng(seed).random((samples, m))
    km = KMeans(n_clusters=n_cells, n_init=1, max_iter=100, random_state=seed).fit(pts)
    return km.cluster_centers_


def qd_score_cvt(f, b, centroids, offset: float = 0.0) -> dict:
    """CVT archive QD score (nearest centroid). Returns {qd_score, coverage, n_filled, n_cells}."""
    from scipy.spatial import cKDTree
    f = np.asarray(f, dtype=np.float64).reshape(-1)
    centroids = np.asarray(centroids, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64).reshape(len(f), centroids.shape[1])
    cell = cKDTree(centroids).query(b)[1] if len(f) else np.zeros(0, np.int64)
    return _archive_stats(f - offset, np.asarray(cell), len(centroids))


def vendi_score(b, sigma_v: float | None = None, max_n: int = 2000, seed: int = 0) -> float:
    """Vendi score exp(-sum lambda log lambda), lambda = eig(K/n), K = exp(-||b-b'||^2 / sigma_v^2),
    sigma_v default sqrt(m/6). Subsamples to max_n points (fixed seed)."""
    b = np.asarray(b, dtype=np.float64)
    if len(b) > max_n:
        b = b[np.random.default_rng(seed).choice(len(b), max_n, replace=False)]
    sv2 = (b.shape[1] / 6) if sigma_v is None else sigma_v ** 2
    K = np.exp(-((b[:, None] - b[None]) ** 2).sum(-1) / sv2)
    lam = np.clip(np.linalg.eigvalsh(K / len(b)), 0, None)
    lam = lam[lam > 1e-12]
    return float(np.exp(-(lam * np.log(lam)).sum()))


def ribs_cvt_centroids(m: int, n_cells: int = 512, samples: int = 20000, seed: int = 232323) -> np.ndarray:
    """The paper's fixed evaluation archive: ribs.CVTArchive(centroids=n_cells, ranges=[(0,1)]*m, seed, samples)."""
    _ribs()
    from ribs.archives import CVTArchive
    return np.asarray(CVTArchive(solution_dim=0, centroids=n_cells, ranges=[(0, 1)] * m, seed=seed,
                                 samples=samples).centroids)


def approx_soft_qd_score(f, b, eps: float = 1e-6) -> float:
    """The paper's reported 'approx Soft QD score' (src/evaluate.py): the lower bound S~ on logit descriptors with
    gamma^2 = m/6, i.e. sum f - sum_{i<j} sqrt(f_i^+ f_j^+) exp(-||l_i - l_j||^2 / (m/6))."""
    b = np.asarray(b, dtype=np.float64)
    bc = np.clip(b, eps, 1 - eps)
    return soft_qd_lower_bound(f, np.log(bc) - np.log1p(-bc), b.shape[1] / 6.0)


# --------------------------------------------------------------------------- ribs baselines
_RIBS_MSG = ("pyribs is not installed: `pip install ribs==0.12.0` (pulls numba 0.68 + llvmlite 0.50, "
             "numpy_groupies, sortedcontainers, array_api_compat) to run the MAP-Elites / CMA-MAE baselines.")


def _ribs():
    try:
        import ribs.archives, ribs.emitters, ribs.schedulers  # noqa: F401
        return ribs
    except ImportError as e:  # pragma: no cover - depends on env
        raise ImportError(_RIBS_MSG) from e


def _run_scheduler(scheduler, benchmark, m, budget):
    n = 0
    while n < budget:
        sols = scheduler.ask()
        f, b = evaluate_np(benchmark, sols, m)
        scheduler.tell(f, b)
        n += len(sols)
    return n


def _run_dqd_scheduler(scheduler, benchmark, m, budget):
    """DQD rounds as the paper's src/qd/cma_maega.py: ask_dqd (one solution point per emitter, evaluated with its
    gradients: counted as one evaluation each, as the paper counts them) then ask (the emitters' gradient
    arborescence samples). Stops once `budget` evaluations are reached."""
    n = 0
    while n < budget:
        sols = scheduler.ask_dqd()
        scheduler.tell_dqd(*evaluate_with_jacobian(benchmark, sols, m))
        n += len(sols)
        sols = scheduler.ask()
        scheduler.tell(*evaluate_np(benchmark, sols, m))
        n += len(sols)
    return n


def _elites(archive):
    data = archive.data()
    return {"x": np.asarray(data["solution"]), "f": np.asarray(data["objective"]),
            "b": np.asarray(data["measures"])}


def _initial_solutions(seed: int, n_emitters: int, D: int) -> np.ndarray:
    """One random start per emitter, x0 ~ U[-5.12, 5.12]^D (as the paper's baselines: task.get_random_solution)."""
    return np.random.default_rng(seed).uniform(-LIM, LIM, (n_emitters, D))


def run_map_elites(benchmark: str = "rastrigin", budget: int = 4000, seed: int = 0, D: int = 32, m: int = 4,
                   centroids=2000, batch_size: int = 36, n_emitters: int = 15, iso_sigma: float = 0.5,
                   line_sigma: float = 0.2) -> dict:
    """MAP-Elites (CVTArchive + IsoLineEmitter, Vassiliades & Mouret's Iso+LineDD) via ribs 0.12.

    Runs whole ask/tell rounds of n_emitters x batch_size until `budget` evaluations are reached (the last round may
    overshoot by < one round, in the baseline's favour). Returns {x, f, b, n_evals} of the final elites."""
    _ribs()
    from ribs.archives import CVTArchive
    from ribs.emitters import IsoLineEmitter
    from ribs.schedulers import Scheduler
    arch = CVTArchive(solution_dim=D, centroids=centroids, ranges=[(0, 1)] * m, seed=seed, samples=20000)
    x0s = _initial_solutions(seed, n_emitters, D)
    ems = [IsoLineEmitter(arch, iso_sigma=iso_sigma, line_sigma=line_sigma, x0=x0s[i], batch_size=batch_size,
                          seed=seed * 1000 + i) for i in range(n_emitters)]
    n = _run_scheduler(Scheduler(arch, ems), benchmark, m, budget)
    return {**_elites(arch), "n_evals": n}


def run_cma_mae(benchmark: str = "rastrigin", budget: int = 4000, seed: int = 0, D: int = 32, m: int = 4,
                centroids=2000, batch_size: int = 36, n_emitters: int = 15, sigma0: float = 0.5,
                learning_rate: float = 0.01) -> dict:
    """CMA-MAE (CVTArchive with archive learning rate, threshold_min=0 + sep-CMA-ES 'imp' emitters with mu selection
    and basic restarts, as the paper's src/qd/cma_mae.py); elites are read from a result archive on the same
    centroids (the training archive's thresholds are annealed, its elites are not the best found)."""
    _ribs()
    from ribs.archives import CVTArchive
    from ribs.emitters import EvolutionStrategyEmitter
    from ribs.schedulers import Scheduler
    kw = dict(solution_dim=D, centroids=centroids, ranges=[(0, 1)] * m, seed=seed, samples=20000)
    arch = CVTArchive(learning_rate=learning_rate, threshold_min=0.0, **kw)
    res = CVTArchive(centroids=arch.centroids, solution_dim=D, ranges=[(0, 1)] * m)
    x0s = _initial_solutions(seed, n_emitters, D)
    ems = [EvolutionStrategyEmitter(arch, x0=x0s[i], sigma0=sigma0, ranker="imp", es="sep_cma_es",
                                    selection_rule="mu", restart_rule="basic", batch_size=batch_size,
                                    seed=seed * 1000 + i) for i in range(n_emitters)]
    n = _run_scheduler(Scheduler(arch, ems, result_archive=res), benchmark, m, budget)
    return {**_elites(res), "n_evals": n}


def run_cma_maega(benchmark: str = "rastrigin", budget: int = 4000, seed: int = 0, D: int = 32, m: int = 4,
                  centroids=2000, batch_size: int = 36, n_emitters: int = 15, sigma0: float = 0.5, lr: float = 0.05,
                  learning_rate: float = 0.01) -> dict:
    """CMA-MAEGA (Fontaine & Nikolaidis 2023): CMA-MAE's annealed archive (learning rate, threshold_min = 0) with
    gradient-arborescence emitters (ribs GradientArborescenceEmitter: 'imp' ranker, mu selection, basic restarts, Adam
    on the solution point, normalised gradients), as the paper's src/qd/cma_maega.py. Each emitter's round is
    batch_size evaluations: its solution point with gradients + batch_size - 1 samples. Elites from a result archive
    on the same centroids."""
    _ribs()
    from ribs.archives import CVTArchive
    from ribs.emitters import GradientArborescenceEmitter
    from ribs.schedulers import Scheduler
    kw = dict(solution_dim=D, centroids=centroids, ranges=[(0, 1)] * m, seed=seed, samples=20000)
    arch = CVTArchive(learning_rate=learning_rate, threshold_min=0.0, **kw)
    res = CVTArchive(centroids=arch.centroids, solution_dim=D, ranges=[(0, 1)] * m)
    x0s = _initial_solutions(seed, n_emitters, D)
    ems = [GradientArborescenceEmitter(arch, x0=x0s[i], sigma0=sigma0, lr=lr, ranker="imp", selection_rule="mu",
                                       restart_rule="basic", grad_opt="adam", batch_size=batch_size - 1,
                                       seed=seed * 1000 + i) for i in range(n_emitters)]
    n = _run_dqd_scheduler(Scheduler(arch, ems, result_archive=res), benchmark, m, budget)
    return {**_elites(res), "n_evals": n}
