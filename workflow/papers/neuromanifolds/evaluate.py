"""Table A (dimensions), tidy spectra and gradients for the figures, each claim's metrics per unit (for the method
and, by the same function, for each control), and claims.yaml.

Units: an (architecture, degree) row for ranks, an architecture for fibers and C2's count, a data set for E5, a
seed for E6. Ranks are certified by the exact rank mod p (a lower bound of dim M that meets the upper bound).

Controls (claims.yaml `controls:`), each the same `measure` on tables where the control's rows take the method's
place (`swapped`): sigma = x^r for the generic claims and generic sigma for the x^r claim (rows of the ranks step,
fibers of the x^r fiber job); the x^r-symmetric pair for the CNN node; the other network kind for E5."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core import claims as claims_mod
from workflow.core.io import read_npz, write_text
from workflow.core.step import Step

READS = ()

CLAIMS = Path(__file__).with_name("claims.yaml")


def flag(series: pd.Series) -> pd.Series:
    """A boolean column read back from CSV (bool, or the strings 'True'/'False')."""
    return series.astype(str).str.lower().eq("true")


def swapped(table: pd.DataFrame, column: str, a: str, b: str) -> pd.DataFrame:
    """``table`` with the labels ``a`` and ``b`` of ``column`` exchanged: a control's rows take the method's place
    (and the method's rows the control's), so that the same ``measure`` judges the control."""
    return table.assign(**{column: table[column].replace({a: b, b: a})})


def measure(dims: pd.DataFrame, singular: pd.DataFrame, fibers: pd.DataFrame, critical: pd.DataFrame,
            sparsity: pd.DataFrame) -> dict[str, list[float]]:
    """{claim metric: [value per unit]}; NaN values (nothing converged, nothing run) are left out, not counted.
    Every bound is the claim's own, from the architecture (#params, #hidden, the ambient dimension of the claim's
    sigma), never from the row's sigma, so a control's rows are held to the claim's bound."""
    m: dict[str, list[float]] = {}

    def put(name, values):
        m[name] = [float(v) for v in np.asarray(values, dtype=float).ravel() if not np.isnan(v)]

    # C1: generic MLP, rank == min(#params, ambient) (exact and numerical)
    mlp = dims[dims.kind == "mlp"]
    gen = mlp[mlp.activation == "generic"]
    bound = np.minimum(gen.n_params, gen.ambient_generic)
    put("c1_exact_rank_gap", bound - gen.rank_exact_lb)
    put("c1_numeric_rank_gap", (gen.rank_numeric - bound).abs())
    # C1f: the fibers hold only permutations of W*
    fm = fibers[(fibers.kind == "mlp") & (fibers.n_converged > 0)]
    put("c1_fiber_other_clusters", fm.n_other_clusters)
    # C2: sigma = x^r, rank == min(#params - #hidden, ambient); strictly below generic at every degree
    mono = mlp[mlp.activation == "monomial"]
    mono_bound = np.minimum(mono.n_params - mono.n_hidden, mono.ambient_monomial)
    put("c2_exact_rank_gap", (mono_bound - mono.rank_exact_lb).abs())
    put("c2_numeric_rank_gap", (mono.rank_numeric - mono_bound).abs())
    pair = gen.merge(mono, on=["arch", "degree"], suffixes=("_gen", "_mono"))
    below = (pair.rank_exact_lb_mono < pair.rank_exact_lb_gen).groupby(pair.arch).all()
    put("c2_strictly_below_generic", below.astype(float))
    # C3: CNN rank == sum k (= #params) at a random and at a zero-padded point
    cnn = dims[(dims.kind == "cnn") & (dims.activation == "generic")]
    put("c3_exact_rank_gap", cnn.n_params - cnn.rank_exact_lb)
    put("c3_exact_rank_gap_zero_padded", cnn.n_params - cnn.rank_zero_padded_exact_lb)
    put("c3_numeric_rank_gap", np.maximum((cnn.rank_numeric - cnn.n_params).abs(),
                                          (cnn.rank_zero_padded - cnn.n_params).abs()))
    # C3f: one fiber cluster, W* itself
    fc = fibers[(fibers.kind == "cnn") & (fibers.n_converged > 0)]
    put("c3_cnn_fiber_clusters", fc.n_clusters)
    put("c3_cnn_fiber_other_clusters", fc.n_other_clusters)
    # C4s: MLP dead neuron drops the rank; the CNN shift keeps the function. C4: two tangent spaces at the node
    dead = singular[singular.point == "dead_neuron"]
    put("c4_mlp_dead_rank_drop", dead.rank_generic - dead.rank_numeric)
    node = singular[singular.point == "node"]
    put("c4_cnn_node_max_abs_diff", node.max_abs_diff)
    put("c4_cnn_node_joint_rank_excess", node.rank_joint_exact_lb - node.sum_k)
    # C5s: embedded MLP subnetwork critical points are critical for the full MLP. C5: CNN ones are not
    mc, cc = critical[critical.kind == "mlp"], critical[critical.kind == "cnn"]
    put("c5_mlp_grad_dead_max", mc.grad_exposed_max)
    put("c5_mlp_full_critical", flag(mc.full_critical)[flag(mc.converged)].astype(float))
    put("c5_cnn_not_critical", flag(cc.not_critical)[flag(cc.converged)].astype(float))
    # C6 (info): paired per seed, both runs finite: MLP ends sparse minus CNN ends sparse
    if set(sparsity.kind) >= {"mlp", "cnn"}:
        s = sparsity.assign(sparse=flag(sparsity["sparse"]).astype(float), diverged=flag(sparsity.diverged))
        w = s.pivot(index="seed", columns="kind", values=["sparse", "diverged"])
        ok = ~(w["diverged"]["mlp"].astype(bool) | w["diverged"]["cnn"].astype(bool))
        put("info_c6_sparse_mlp_minus_cnn", (w["sparse"]["mlp"] - w["sparse"]["cnn"])[ok])
    else:
        put("info_c6_sparse_mlp_minus_cnn", [])
    return m


def control_measures(dims, singular, fibers, fibers_monomial, critical, sparsity) -> dict[str, dict[str, list[float]]]:
    """Each control of claims.yaml: the same ``measure`` with the control's rows in the method's place."""
    sigma = measure(swapped(dims, "activation", "generic", "monomial"), singular, fibers_monomial, critical, sparsity)
    kinds = measure(dims, singular, fibers, swapped(critical, "kind", "mlp", "cnn"), sparsity)
    return {"monomial_sigma": sigma, "generic_sigma": sigma,
            "symmetric_pair": measure(dims, swapped(singular, "point", "node", "symmetric_pair"), fibers, critical,
                                      sparsity),
            "mlp_subnetwork": kinds, "cnn_subnetwork": kinds,
            # placebos: x^r with its homogeneity made inert (C2); W paired with a random non-preimage partner (C4)
            "placebo_homogeneity": measure(swapped(dims, "activation", "monomial", "monomial_perturbed"), singular,
                                           fibers, critical, sparsity),
            "placebo_preimage": measure(dims, swapped(singular, "point", "node", "random_partner"), fibers, critical,
                                        sparsity)}


def table_a(dims: pd.DataFrame, singular: pd.DataFrame) -> pd.DataFrame:
    """Architecture | #params | ambient | rank generic | rank monomial | rank at subnetwork (MLP: one dead neuron;
    CNN: zero-padded point), per degree, then the paper's worked examples."""
    gen = dims[dims.activation.isin(["generic", "example"])]
    mono = dims[dims.activation == "monomial"][["arch", "degree", "rank_numeric", "upper_bound"]]
    mono = mono.rename(columns={"rank_numeric": "rank_monomial", "upper_bound": "monomial_bound"})
    dead = singular[singular.point == "dead_neuron"][["arch", "degree", "rank_numeric"]]
    dead = dead.rename(columns={"rank_numeric": "rank_dead"})
    node = singular[singular.point == "node"][["arch", "degree", "rank_joint"]]
    node = node.rename(columns={"rank_joint": "rank_joint_node"})
    t = gen.merge(mono, on=["arch", "degree"], how="left").merge(dead, on=["arch", "degree"], how="left")
    t = t.merge(node, on=["arch", "degree"], how="left")
    example = t.activation.eq("example")
    for col in ("rank_monomial", "monomial_bound", "rank_dead", "rank_joint_node"):
        t.loc[example, col] = np.nan  # the examples have their own sigma: no x^r or dead-neuron companion
    t["rank_subnetwork"] = np.where(t.kind == "mlp", t.rank_dead, t.rank_zero_padded)
    t["subnetwork"] = np.where(t.kind == "mlp", "dead neuron", "zero-padded")
    t = t.rename(columns={"arch": "architecture", "degree": "r", "rank_numeric": "rank_generic",
                          "rank_exact_lb": "rank_generic_exact"})
    t["order"] = example.astype(int) * 2 + t.kind.eq("cnn").astype(int)
    cols = ["architecture", "kind", "sigma", "r", "n_params", "n_hidden", "ambient", "rank_generic", "rank_generic_exact",
            "certified", "rank_monomial", "monomial_bound", "rank_subnetwork", "subnetwork", "rank_joint_node"]
    return t.sort_values(["order", "kind"], kind="stable")[cols].reset_index(drop=True)


def spectra_table(spectra: dict) -> pd.DataFrame:
    """Long table of singular values: arch, kind, degree, point, index (1-based), sv (normalised by s_max)."""
    frames = []
    for key, sv in spectra.items():
        arch, r, point = key.split("|")
        frames.append(pd.DataFrame({"arch": arch, "kind": arch.split("(")[0], "degree": int(r), "point": point,
                                    "index": np.arange(1, len(sv) + 1), "sv": sv}))
    return pd.concat(frames, ignore_index=True)


def gradient_table(critical: pd.DataFrame) -> pd.DataFrame:
    """Per data set: the full gradient at the embedded subnetwork point and its exposed part (dead neuron's / zeroed
    entries' components), for Fig. C."""
    return pd.DataFrame({"kind": critical.kind, "arch": critical.arch, "dataset": critical.dataset,
                         "converged": flag(critical.converged), "grad_sub_norm": critical.grad_sub_norm,
                         "grad_full_norm": critical.grad_full_norm, "grad_exposed_max": critical.grad_exposed_max})


def main(argv=None):
    step = Step("neuromanifolds", "evaluate", __doc__)
    step.parser.add_argument("--dimensions", type=Path, required=True)
    step.parser.add_argument("--singular", type=Path, required=True)
    step.parser.add_argument("--spectra", type=Path, required=True, help="the ranks step's .npz")
    step.parser.add_argument("--fibers", type=Path, required=True, help="fibers of generic sigma (fibers/generic.csv)")
    step.parser.add_argument("--fibers-control", type=Path, required=True, help="fibers of sigma = x^r (fibers/monomial.csv)")
    step.parser.add_argument("--critical", type=Path, nargs=2, required=True, help="critical/mlp.csv, critical/cnn.csv")
    step.parser.add_argument("--sparsity", type=Path, required=True)
    step.parser.add_argument("--table", type=Path, required=True, help="Table A (.csv)")
    step.parser.add_argument("--spectra-table", type=Path, required=True, help="tidy singular values (.csv)")
    step.parser.add_argument("--gradients", type=Path, required=True, help="tidy E5 gradients (.csv)")
    step.parser.add_argument("--claims", type=Path, required=True)
    args, _ = step.start(argv)
    dims, singular = pd.read_csv(args.dimensions), pd.read_csv(args.singular)
    critical = pd.concat([pd.read_csv(p) for p in args.critical], ignore_index=True)
    fibers, fibers_mono, sparsity = pd.read_csv(args.fibers), pd.read_csv(args.fibers_control), pd.read_csv(args.sparsity)
    result = claims_mod.check(CLAIMS, measure(dims, singular, fibers, critical, sparsity), args.profile, args.claims,
                              step.log, controls=control_measures(dims, singular, fibers, fibers_mono, critical, sparsity))
    write_text(args.table, table_a(dims, singular).to_csv(index=False, float_format="%.6g"))
    write_text(args.spectra_table, spectra_table(read_npz(args.spectra)).to_csv(index=False, float_format="%.6g"))
    write_text(args.gradients, gradient_table(critical).to_csv(index=False, float_format="%.6g"))
    step.finish(metrics=claims_mod.as_metrics(result), artifacts=[args.table, args.claims],
                outputs=[args.table, args.spectra_table, args.gradients, args.claims])


if __name__ == "__main__":
    main()
