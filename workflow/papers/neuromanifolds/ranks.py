"""E1/E2/E4: Jacobian ranks of the parametrisation (float SVD and exact mod p) for every MLP and CNN, sigma generic
and x^r (the x^r rows are the contrast that controls the generic claims, and vice versa), at random and zero-padded
points, plus the singular points of sparse subnetworks (dead neuron, CNN node) and C4's control (a CNN point paired
with its x^r-symmetric image). Placebos: C2's x^r with a small seeded lower-degree perturbation (MLP rows of activation
``monomial_perturbed``) and C4's W paired with the shift of another random zero-padded point (point ``random_partner``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_npz, write_text
from workflow.core.step import Step

from . import dimension, nets, points, singular
from .points import arch_spec, point_seed, random_point

READS = ("neuromanifolds.architectures", "neuromanifolds.ranks")

DEAD = {"layer": 1, "neuron": 0}  # E4: which neuron dies; every neuron of a layer is equivalent (permutation symmetry)
DIM_COLUMNS = ["arch", "kind", "activation", "sigma", "degree", "n_points", "n_params", "n_hidden", "ambient",
               "ambient_generic", "ambient_monomial", "formula", "expected", "upper_bound", "rank_numeric",
               "rank_numeric_raw", "rank_exact_lb", "certified", "gap", "rank_zero_padded", "rank_zero_padded_exact_lb",
               "seed"]


def poly(c) -> str:
    """sigma's coefficients -> 'x^3 + x^2' (for the paper's worked examples)."""
    terms = [("" if v == 1 else f"{v:g}") + ("x" if i == 1 else f"x^{i}") for i, v in enumerate(c) if v != 0 and i > 0]
    return " + ".join(reversed(terms)).replace("+ -", "- ") or "0"


def spectrum_key(label: str, r: int, point: str) -> str:
    return f"{label}|{r}|{point}"


def ambients(spec: dict, r: int) -> dict:
    """The ambient dimension of this architecture at degree r for generic sigma and for x^r (it depends on the
    degrees sigma contains): each claim's bound uses its own sigma's, also when a control's row stands in."""
    arch = points.make_arch(spec)
    generic = np.r_[0.0, np.ones(r)]  # every degree 1..r present, as for c_i ~ N(0, 1)
    return {"ambient_generic": nets.ambient_dim(arch, generic),
            "ambient_monomial": nets.ambient_dim(arch, nets.activation_coeffs(r, "monomial"))}


PERTURBATION = 0.125  # C2's placebo: x^r + PERTURBATION * (a seeded generic polynomial of degree < r), dyadic


def perturbed_monomial(r: int, seed: int) -> np.ndarray:
    """C2's placebo activation: x^r with only its homogeneity made inert, sigma = x^r + 0.125 sum_{i=1}^{r-1} c_i x^i
    with c_i ~ N(0, 1) from its own seeded stream (c_0 = 0 as for every sigma here): the same degree and leading
    term, no per-neuron scaling symmetry."""
    c = nets.activation_coeffs(r, "monomial")
    c[1:r] = PERTURBATION * np.random.default_rng([seed, 31]).standard_normal(r - 1)
    return c


def dimension_row(rep: dict, seed: int, sigma: str, spec: dict) -> dict:
    return {k: rep.get(k, np.nan) for k in DIM_COLUMNS} | {"sigma": sigma, "seed": seed} | ambients(spec, rep["degree"])


def dimension_rows(specs: list[dict], degrees: list[int], n_points: int, seed: int, log=print) -> tuple[list, dict]:
    """E1 (MLP) and E2 (CNN, at a random and at a zero-padded point) for every degree, sigma generic and x^r; for the
    MLPs also C2's placebo (activation ``monomial_perturbed``: ``perturbed_monomial`` at the x^r row's very point, since
    explicit coefficients, like x^r, draw nothing before the parameters and inputs)."""
    rows, spectra = [], {}
    for spec in specs:
        label = points.make_arch(spec).label()
        for r in degrees:
            s = point_seed(seed, label, r)
            for activation in ("generic", "monomial"):
                rep = dimension.architecture_dimension(spec, r, activation, n_points=n_points, seed=s)
                rows.append(dimension_row(rep, s, "generic" if activation == "generic" else f"x^{r}", spec))
                spectra[spectrum_key(label, r, activation)] = rep["singular_values"]
                if spec["kind"] == "cnn" and activation == "generic":
                    spectra[spectrum_key(label, r, "zero_padded")] = rep["singular_values_zero_padded"]
            generic_row = rows[-2]
            if spec["kind"] == "mlp":
                c = perturbed_monomial(r, s)
                rep = dimension.architecture_dimension(spec, r, c, n_points=n_points, seed=s)
                rows.append(dimension_row(rep, s, poly(c), spec) | {"activation": "monomial_perturbed"})
            last = generic_row
            log(f"{label} r={r}: rank {last['rank_numeric']} (exact >= {last['rank_exact_lb']}) of bound "
                f"{last['upper_bound']}, #params {last['n_params']}, ambient {last['ambient']}")
    return rows, spectra


def example_rows(examples: list[dict], n_points: int, seed: int, log=print) -> list:
    """The paper's own worked examples (explicit sigma), e.g. MLP (2,2,1) with x^3 + x^2: a hypersurface in R^7."""
    rows = []
    for ex in examples:
        spec, c = arch_spec(ex["arch"]), [float(v) for v in ex["coeffs"]]
        label = points.make_arch(spec).label()
        s = point_seed(seed, label, len(c) - 1)
        rep = dimension.architecture_dimension(spec, len(c) - 1, c, n_points=n_points, seed=s)
        rows.append(dimension_row(rep, s, poly(c), spec) | {"activation": "example"})
        log(f"paper example {label}, sigma = {poly(c)}: rank {rep['rank_numeric']} in ambient {rep['ambient']}")
    return rows


def singular_rows(specs: list[dict], degrees: list[int], n_points: int, seed: int, log=print) -> tuple[list, dict]:
    """E4 at the point of each Table A row: MLP with one dead neuron (rank drop, 'cusp type'); CNN zero-padded point W
    and its shift W' (same function, two tangent spaces: 'node type'), and the control of the node: the same W with
    sigma = x^r paired with its symmetric image (same function, one tangent space: point 'symmetric_pair')."""
    rows, spectra = [], {}
    for spec in specs:
        for r in degrees:
            arch, c, theta, X, rng = random_point(spec, r, n_points, point_seed(seed, points.make_arch(spec).label(), r))
            base = {"arch": arch.label(), "kind": arch.kind, "degree": r, "n_params": arch.n_params}
            if arch.kind == "mlp":
                rep = singular.mlp_subnetwork_report(arch, c, X, theta, **DEAD)
                rank_generic = nets.numerical_rank(nets.jacobian(arch, theta, X, c))["rank"]
                rows.append(base | {"point": "dead_neuron", "rank_generic": rank_generic} |
                            {k: rep[k] for k in ("layer", "neuron", "rank_numeric", "rank_exact_lb", "rank_sub", "n_params_sub")})
                spectra[spectrum_key(arch.label(), r, "dead_neuron")] = rep["singular_values"]
                log(f"{arch.label()} r={r}: dead neuron rank {rep['rank_numeric']} < generic {rank_generic}")
            else:
                shifts = points.cnn_shift_vectors(arch)[0]
                thz = points.cnn_zero_padded_params(arch, rng, shifts)  # the zero-padded point of the Table A row
                rep = singular.cnn_node_report(arch, c, X, thz, shifts)
                keep = ("sum_k", "max_abs_diff", "rank_W", "rank_W_shift", "rank_joint", "rank_joint_exact_lb")
                rows.append(base | {"point": "node", "shifts": " ".join(map(str, shifts))} | {k: rep[k] for k in keep})
                pair = singular.cnn_symmetric_pair_report(arch, r, X, thz)
                rows.append(base | {"point": "symmetric_pair", "shifts": ""} | {k: pair[k] for k in keep})
                # C4's placebo: W paired with the shift of another random zero-padded point (W' 's zero pattern,
                # not a preimage of phi(W)): only "W' computes W's function" made inert, the same shift and sigma
                other = points.cnn_zero_padded_params(arch, np.random.default_rng([point_seed(seed, arch.label(), r), 41]), shifts)
                rand = singular._pair_report(arch, c, X, thz, points.shift_cnn_params(arch, other, shifts))
                rows.append(base | {"point": "random_partner", "shifts": " ".join(map(str, shifts))} | {k: rand[k] for k in keep})
                log(f"{arch.label()} r={r}: node at shift {shifts}: max|phi(W)-phi(W')| = {rep['max_abs_diff']:.2g}, "
                    f"joint rank {rep['rank_joint']} vs sum k {rep['sum_k']}; x^r symmetric pair: joint rank "
                    f"{pair['rank_joint']}")
    return rows, spectra


def main(argv=None):
    step = Step("neuromanifolds", "ranks", __doc__)
    step.parser.add_argument("--dimensions", type=Path, required=True, help=".csv, one row per architecture x degree x sigma")
    step.parser.add_argument("--singular", type=Path, required=True, help=".csv of the E4 subnetwork points")
    step.parser.add_argument("--spectra", type=Path, required=True, help=".npz of normalised singular values per point")
    args, p = step.start(argv)
    specs = [arch_spec(w) for w in p["mlp"]] + [arch_spec(k) for k in p["cnn"]]
    dims, spectra = dimension_rows(specs, p["degrees"], p["n_points"], p["seed"], log=step.log)
    dims += example_rows(p["examples"], p["n_points"], p["seed"], log=step.log)
    sing, sing_spectra = singular_rows(specs, p["degrees"], p["n_points"], p["seed"], log=step.log)
    dims, sing = pd.DataFrame(dims), pd.DataFrame(sing)
    write_text(args.dimensions, dims.to_csv(index=False, float_format="%.6g"))
    write_text(args.singular, sing.to_csv(index=False, float_format="%.6g"))
    write_npz(args.spectra, **spectra, **sing_spectra)
    gen = dims[dims.activation == "generic"]
    step.finish(metrics={"rows": len(dims), "generic_certified": gen.certified.mean(),
                         "generic_rank_equals_bound": (gen.rank_numeric == gen.upper_bound).mean()},
                outputs=[args.dimensions, args.singular, args.spectra])


if __name__ == "__main__":
    main()
