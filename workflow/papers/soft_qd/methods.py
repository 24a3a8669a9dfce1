"""Core algorithms for `soft_qd` (Hedayatian & Nikolaidis, Soft QD / SQUAD, arXiv 2512.00810): the optimisers and
the LP benchmarks they optimise, in torch. The scores they are judged by (Soft QD, QD, Vendi) are in scores.py.

Pure functions, deterministic given seeds, no I/O.
  * squad                    -- SQUAD optimiser (batched, kNN repulsion, per-row Adam, logit descriptors; the
                                placebo repels from random members instead)
  * lp_rastrigin / lp_sphere -- LP benchmarks (objective in [0,100], descriptors in [0,1]^m)
  * run_map_elites / run_cma_mae / run_cma_maega -- thin pyribs (``ribs``) baselines; raise ImportError if ribs missing
  * run_method               -- one method with its knobs at one m (what a run job and a tuning grid call)
"""
from __future__ import annotations

import math

import numpy as np
import torch

from .plan import CONTROL, METHODS, PLACEBO, budget, per_m
from .scores import require_ribs, soft_qd_lower_bound

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


# --------------------------------------------------------------------------- SQUAD
def _logit(b: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    b = b.clamp(eps, 1 - eps)
    return torch.log(b) - torch.log1p(-b)


def squad(benchmark: str = "rastrigin", D: int = 32, m: int = 4, N: int = 64, epochs: int = 20,
          sigma2: float = 0.1, lr: float = 0.05, batch_size: int = 64, K: int = 16, seed: int = 0,
          betas=(0.9, 0.999), eps: float = 1e-8, x0: np.ndarray | None = None,
          random_neighbours: bool = False) -> dict:
    """SQUAD: ascend the Soft-QD lower bound with per-solution Adam on mini-batches (port of softqd.py).

    Per batch B (random permutation each epoch): loss = -[sum_{i in B} f_i
      - 1/2 sum_{i in B} sum_{j in kNN(i)} sqrt(f_i^+ f_j^+) k_ij],  k_ij = exp(-||l_i - l_j||^2 / sigma2),
    l = logit(clip(b)) descriptors; neighbours' f, l come detached from a cache; self and k < 1e-6 dropped.
    Adam moments/step counts are kept per row and only batch rows are updated.

    ``random_neighbours`` (the placebo of C1 and C2): each row is repelled from K population members drawn at random
    (distinct, never itself; from a generator of its own, so that the initial population and the batches are
    SQUAD's) instead of its K nearest in descriptor space; the term, its kernel, sigma2 and every other step kept.

    Returns dict: x (N,D) np, f (N,), b (N,m) in [0,1], history {mean_f, max_f, lower_bound} per epoch
    (index 0 = init), n_evals (int, initial N + one re-evaluation per updated solution).
    """
    fn = BENCHMARKS[benchmark]
    g = torch.Generator().manual_seed(seed)
    g_nn = torch.Generator().manual_seed(seed + 7919) if random_neighbours else None  # the placebo's own draws
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
                    if g_nn is not None:  # the placebo: random "distances", so the K picked are random members
                        d2all = torch.rand(d2all.shape, generator=g_nn, dtype=dt)
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


# --------------------------------------------------------------------------- ribs baselines
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
    require_ribs()
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
    require_ribs()
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
    require_ribs()
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


# --------------------------------------------------------------------------- one run
def run_method(method: str, benchmark: str, m: int, seed: int, p: dict) -> dict:
    """Dispatch to the method with its knobs for this m; returns {x, f, b, n_evals, history?}.

    p holds the budget (N, epochs), D, and the method's knobs (SQUAD: lr, sigma2, batch_size, K; ribs baselines:
    cells, n_emitters, batch_per_emitter and their own)."""
    D, E = int(p["D"]), budget(p)
    if method in ("squad", CONTROL, PLACEBO):
        return squad(benchmark, D=D, m=m, N=p["N"], epochs=p["epochs"], sigma2=per_m(p["sigma2"], m),
                     lr=per_m(p["lr"], m), batch_size=p["batch_size"], K=0 if method == CONTROL else p["K"], seed=seed,
                     random_neighbours=method == PLACEBO)
    common = dict(budget=E, seed=seed, D=D, m=m, centroids=p["cells"], batch_size=p["batch_per_emitter"],
                  n_emitters=p["n_emitters"])
    if method == "cma_mae":
        return run_cma_mae(benchmark, sigma0=per_m(p["sigma0"], m), learning_rate=per_m(p["archive_lr"], m), **common)
    if method == "cma_maega":
        return run_cma_maega(benchmark, sigma0=per_m(p["sigma0"], m), lr=per_m(p["lr"], m),
                             learning_rate=per_m(p["archive_lr"], m), **common)
    if method == "map_elites":
        return run_map_elites(benchmark, iso_sigma=per_m(p["iso_sigma"], m), line_sigma=per_m(p["line_sigma"], m),
                              **common)
    raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
