"""Tests for ``aurelius`` (workflow/papers/aurelius): the relation set and its templates, the layouts the renderer
draws, the MSR protocol's checks on hand-made detections, the effects and the log-mel, the discernibility filter,
the runs' training data and controls, the claims' metrics on a hand-made table, the plan's checks, and the catalog's
bundle of many files."""
import numpy as np
import pandas as pd
import pytest

from workflow.core.params import ParamsError
from workflow.papers.aurelius import evaluate as V
from workflow.papers.aurelius import events as E
from workflow.papers.aurelius import plan as P
from workflow.papers.aurelius import relations as R
from workflow.papers.aurelius import sounds as S


def tone(seconds=2.0, f=440.0):
    t = np.arange(int(seconds * S.SR)) / S.SR
    return S.normalise(np.sin(2 * np.pi * f * t)).astype(np.float32)


def test_the_paper_s_21_basic_relations_in_six_classes_and_16_nested():
    assert len(R.BASIC) == 21
    groups = {r.group for r in R.BASIC}
    assert groups == {"temporality", "count", "perceptuality", "spatiality", "compositionality"}  # + nested = 6
    nested = R.nested()
    assert len(nested) == 16 and all(r.arity == 2 and r.group == "nested" for r in nested)
    assert {r.name.partition("__")[0] for r in nested} == {"precedence", "succession"}  # as the paper nests them
    for r in R.relations(True):
        assert len(r.templates) == 5 and len(set(r.templates)) == 5
        assert all("{A}" in t and (("{B}" in t) == (r.arity == 2)) for t in r.templates), r.name
    assert all("{N}" in t for t in R.BY_NAME["count"].templates)


def test_captions_fill_the_slots():
    text = R.caption(R.BY_NAME["count"], ["bell ringing"], 0, 3)
    assert text == "bell ringing three times"
    nested = {r.name: r for r in R.nested()}["precedence__farness"]
    assert R.caption(nested, ["bell ringing", "dog barking"], 0) == "distant bell ringing followed by dog barking"


def occurrences(name, n=None):
    rng = np.random.default_rng(0)
    _, occ = R.render(name, [tone(2.0, 440), tone(1.5, 880)], rng, n)
    return occ


def test_layouts_put_events_where_the_relation_says():
    a, b = occurrences("precedence")
    assert (a["slot"], b["slot"]) == (0, 1) and a["end"] < b["start"]
    first, second = occurrences("succession")
    assert (first["slot"], second["slot"]) == (1, 0) and first["end"] < second["start"]
    a, b = occurrences("simultaneity")
    assert a["start"] == b["start"]
    for name in ("balancing", "blending"):  # the official generator puts B after A
        a, b = occurrences(name)
        assert (a["slot"], b["slot"]) == (0, 1) and a["end"] < b["start"]
    assert len(occurrences("count", 4)) == 4 and len(occurrences("periodicity")) == 4
    assert [o["slot"] for o in occurrences("negation")] == [1]  # "B but no A": only B sounds
    assert [o["effect"] for o in occurrences("precedence__reverberation")] == ["reverb", "none"]
    assert [o["effect"] for o in occurrences("farness")] == ["far"]


def test_the_rendered_levels_follow_the_official_gains():
    rng = np.random.default_rng(0)
    canvas, occ = R.render("amplification", [tone(), tone()], rng)
    assert np.sqrt(np.mean(canvas[int(0.6 * S.SR):int(2.4 * S.SR)] ** 2)) == pytest.approx(2 * S.RMS, rel=0.05)
    canvas, _ = R.render("farness", [tone(), tone()], rng)
    assert np.sqrt(np.mean(canvas[int(0.6 * S.SR):int(2.4 * S.SR)] ** 2)) == pytest.approx(0.1 * S.RMS, rel=0.05)
    assert len(S.apply(tone(1.0), "stretch", rng)) == 2 * S.SR
    ramp = S.apply(tone(2.0), "approach", rng)
    assert np.abs(ramp[:S.SR // 4]).max() < 0.1 * np.abs(ramp[-S.SR // 4:]).max()


def run(start, end, level=0.0, effect="none"):
    return {"start": start, "end": end, "level": level, "effect": effect}


def test_relation_checks_on_hand_made_runs():
    a, b = [run(0.5, 2.0)], [run(2.5, 4.0)]
    assert R.relation_holds("precedence", a, b, None) and not R.relation_holds("precedence", b, a, None)
    assert R.relation_holds("succession", b, a, None) and not R.relation_holds("succession", a, b, None)
    assert not R.relation_holds("simultaneity", a, b, None)
    assert R.relation_holds("simultaneity", [run(0.5, 2.0)], [run(0.6, 1.8)], None)
    three = [run(0.5, 1.7), run(2.5, 3.7), run(4.5, 5.7)]
    assert R.relation_holds("count", three, [], 3) and not R.relation_holds("count", three, [], 4)
    assert R.relation_holds("periodicity", three, [], None)
    assert not R.relation_holds("periodicity", [run(0.5, 1.7), run(2.0, 3.2), run(7.0, 8.2)], [], None)
    loud, soft = [run(0.5, 2, level=2.3)], [run(2.5, 4, level=-20.0)]
    assert R.relation_holds("balancing", loud, soft, None) and not R.relation_holds("balancing", soft, loud, None)
    assert R.relation_holds("blending", [run(0, 2, level=0.0)], [run(2.5, 4, level=-1.0)], None)
    assert not R.relation_holds("blending", loud, soft, None)
    # the official checks look for B after A: the same levels at once, or B first, do not hold
    assert not R.relation_holds("balancing", loud, [run(0.5, 2, level=-20.0)], None)
    assert not R.relation_holds("blending", [run(2.5, 4, level=0.0)], [run(0, 2, level=-1.0)], None)
    assert R.relation_holds("farness", [run(0, 2, level=-20.0)], [], None)
    assert not R.relation_holds("farness", [run(0, 2, level=0.0)], [], None)
    assert R.relation_holds("reverberation", [run(0, 2, effect="reverb")], [], None)
    assert not R.relation_holds("reverberation", [run(0, 2, effect="stretch")], [], None)
    # nested: the outer relation and the inner one on A
    assert R.relation_holds("precedence__reverberation", [run(0.5, 2.0, effect="reverb")], b, None)
    assert not R.relation_holds("precedence__reverberation", a, b, None)


@pytest.mark.parametrize("name, truth", [("conjunction", [0, 0, 0, 1]), ("disjunction", [0, 1, 1, 1]),
                                         ("negation", [0, 1, 0, 0]), ("xor", [0, 1, 1, 0]),
                                         ("implication", [1, 1, 0, 1])])
def test_compositional_relations_are_their_truth_tables(name, truth):
    got = [R.relation_holds(name, [run(0, 2)] * has_a, [run(3, 5)] * has_b, None)
           for has_a, has_b in ((0, 0), (0, 1), (1, 0), (1, 1))]
    assert got == [bool(t) for t in truth]


def test_msr_is_presence_times_relation_times_parsimony():
    pair = {"relation": "precedence", "classes": [3, 7], "n": None,
            "occurrences": [{"slot": 0}, {"slot": 1}]}
    right = R.msr(pair, {3: [run(0.5, 2.0)], 7: [run(2.5, 4.0)]})
    assert right == {"presence": 1.0, "relation": 1.0, "parsimony": 1.0, "msr": 1.0}
    extra = R.msr(pair, {3: [run(0.5, 2.0)], 7: [run(2.5, 4.0)], 9: [run(5, 7)]})
    assert extra["parsimony"] == pytest.approx(np.exp(-0.1)) and extra["msr"] == pytest.approx(np.exp(-0.1))
    swapped = R.msr(pair, {3: [run(2.5, 4.0)], 7: [run(0.5, 2.0)]})
    assert swapped["presence"] == 1.0 and swapped["msr"] == 0.0
    assert R.msr(pair, {3: [run(0.5, 2.0)]})["presence"] == 0.0


def test_runs_shorter_than_a_second_are_not_events():
    prob = np.zeros(10 * S.FPS)
    prob[S.FPS:int(1.8 * S.FPS)] = 0.9  # 0.8 s
    prob[4 * S.FPS:int(5.2 * S.FPS)] = 0.9  # 1.2 s
    assert R.runs(prob, 0.5) == [(4 * S.FPS, int(5.2 * S.FPS))]


def test_the_log_mel_puts_a_tone_in_its_band_at_its_frames():
    canvas = S.empty_canvas()
    S.place(canvas, tone(2.0, 1000.0), 1.0)
    m = S.mel(canvas)
    assert m.shape == (S.n_frames(), S.N_MELS) == (200, 64)
    on = m[int(1.1 * S.FPS):int(2.9 * S.FPS)]  # 1.1 - 2.9 s
    assert on.max(1).min() > m[4 * S.FPS:].max() + 5  # the tone stands out in every frame it sounds in
    assert m[int(0.9 * S.FPS) - 1].max() < m[4 * S.FPS:].max() + 1  # and not before it starts (50 ms frames)
    from workflow.lib import audio
    centres = audio.mel_to_hz(np.linspace(0, audio.hz_to_mel(S.SR / 2), S.N_MELS + 2)[1:-1])
    assert abs(centres[on.mean(0).argmax()] - 1000) < 80


def test_two_overlapped_tones_stay_apart_in_the_log_mel():
    canvas = S.empty_canvas()
    S.place(canvas, 1.3 * tone(2.0, 500.0), 1.0)
    S.place(canvas, 0.1 * tone(2.0, 1500.0), 1.0)  # balancing's x0.1 partner, 22 dB under
    m = S.mel(canvas)[int(1.2 * S.FPS):int(2.8 * S.FPS)].mean(0)
    from workflow.lib import audio
    centres = audio.mel_to_hz(np.linspace(0, audio.hz_to_mel(S.SR / 2), S.N_MELS + 2)[1:-1])
    soft = np.abs(centres - 1500).argmin()
    between = np.abs(centres - 1000).argmin()
    assert m[soft] > m[between] + 5  # the soft partner is a peak of its own, not lost in the loud one's skirt


def test_a_log_mel_sounds_back_as_its_tone_at_its_level():
    canvas = S.empty_canvas()
    S.place(canvas, tone(4.0, 1000.0), 1.0)
    heard = S.waveform(S.mel(canvas), iterations=8)
    assert len(heard) == len(canvas)
    peak = np.argmax(np.abs(np.fft.rfft(heard))) * S.SR / len(heard)
    assert abs(peak - 1000) < 100  # within the bands' resolution at 1 kHz
    rms = lambda x: float(np.sqrt(np.mean(x ** 2)))  # noqa: E731
    assert rms(heard[int(1.5 * S.SR):int(4.5 * S.SR)]) == pytest.approx(S.RMS, rel=0.25)  # levels are kept
    assert rms(heard[int(6 * S.SR):]) < 0.01 * S.RMS  # and the silence stays silent


def test_a_rendered_pair_is_the_sum_of_its_parts():
    clips = [tone(2.0, 440), tone(1.5, 880)]
    for name in ("simultaneity", "balancing", "succession__approaching", "count"):
        canvas, occ = R.render(name, clips, np.random.default_rng(1), 3)
        parts = R.render_parts(name, clips, np.random.default_rng(1), 3)
        np.testing.assert_allclose(canvas, sum(alone for alone, _ in parts), atol=1e-7)
        assert occ == [o for _, o in parts]


def test_relation_shaped_training_mixtures_label_each_overlapped_event():
    from workflow.papers.aurelius import train_evaluator as V2

    real = {f"r{i}": tone(2.0 + i / 2, 300.0 * (i + 1)) for i in range(5)}
    classes = [{"kind": "real", "name": k} for k in real]
    rng = np.random.default_rng(0)
    for _ in range(40):
        _, labels, levels = V2.mixture(classes, real, rng, relation_share=1.0)
        assert labels.sum() > 0 and (levels[labels > 0] >= V2.QUIET_DB).all()
        assert (labels.sum(0) > 0).sum() <= 2  # a relation has two slots
    for _ in range(5):  # the overlapped relation (simultaneity) labels both events, each on its own span
        _, labels, _ = V2.mixture(classes, real, rng, relation_share=1.0, overlap_share=1.0)
        assert (labels.sum(1) >= 2).any() and (labels.sum(0) > 0).sum() == 2


def test_the_filter_drops_classes_that_cannot_be_told_apart():
    twin = {"kind": "procedural", "name": "x", "family": "music", "recipe": S.recipe("music", 0, 0)}
    other = {"kind": "procedural", "name": "y", "family": "machinery", "recipe": S.recipe("machinery", 1, 0)}
    acc = E.discernibility([twin, dict(twin, name="x2"), other], {}, 12, np.random.default_rng(0))
    assert acc[2] >= 0.8 and min(acc[0], acc[1]) < 0.7


def test_runs_train_on_thirds_and_the_controls_permute_captions():
    from workflow.papers.aurelius import train as T

    pairs = {"general": [{"text": f"g{i}"} for i in range(6)], "train": [{"text": f"t{i}"} for i in range(9)]}
    mels = {"general": np.arange(6), "train": np.arange(9)}
    rng = np.random.default_rng(0)
    texts, target = T.training_data("ft_1", pairs, mels, rng)
    assert texts == ["t0", "t1", "t2"] and list(target) == [0, 1, 2]
    texts, target = T.training_data("zs", pairs, mels, rng)
    assert texts == [f"g{i}" for i in range(6)]
    texts, target = T.training_data("ft_shuffled_3", pairs, mels, rng)
    assert sorted(texts) == [f"t{i}" for i in range(9)] and texts != [f"t{i}" for i in range(9)]
    assert list(target) == list(range(9))  # the audio is kept, only the pairing is broken
    assert T.epochs_of("fs_2", {"zs": 1, "ft": 2, "fs": 3}) == 3
    assert T.epochs_of("zs_scrambled", {"zs": 1, "ft": 2, "fs": 3}) == 1


def test_plan_names_runs_their_bases_and_what_is_missing():
    assert P.parse("ft_scrambled_3") == ("ft_scrambled", 3) and P.parse("zs") == ("zs", 0)
    assert P.base("ft_2") == "zs" and P.base("ft_scrambled_1") == "zs_scrambled" and P.base("fs_3") is None
    p = {"plan": {"runs": list(P.CLAIMED + P.CONTROLS), "seeds": [0]}, "train": {"d": 48, "heads": 4}}
    P.check(p)
    with pytest.raises(ParamsError, match="lacks"):
        P.check({**p, "plan": {"runs": ["zs", "ft_3"], "seeds": [0]}})
    with pytest.raises(ParamsError, match="not runs"):
        P.check({**p, "plan": {"runs": list(P.CLAIMED + P.CONTROLS) + ["ft_4"], "seeds": [0]}})


def records_like(msr: dict[str, float]) -> pd.DataFrame:
    """A seed's table as evaluate builds it: per run two relations, an easy one (Relation 0.8) and a hard one (0.2)."""
    rows = [{"run": run, "seed": 0, "name": name, "group": group, "arity": arity, "presence": 0.5, "relation": rel,
             "parsimony": 1.0, "msr": value, "fad": 2.0 if run == "zs" else 1.0,
             "val_presence": 0.7 if run == "ft_3" else 0.1}
            for run, value in msr.items()
            for name, group, arity, rel in (("reverberation", "perceptuality", 1, 0.8),
                                            ("precedence", "temporality", 2, 0.2))]
    return pd.DataFrame(rows)


def test_the_claims_metrics_on_a_hand_made_table():
    msr = {"reference": 0.9, "zs": 0.02, "ft_1": 0.2, "ft_2": 0.25, "ft_3": 0.3, "fs_1": 0.05, "fs_2": 0.1,
           "fs_3": 0.2}
    got = V.measure_seed(records_like(msr), {"detector_map": 0.9, "effect_accuracy": 0.95})
    assert got["k1_zs_msr"] == pytest.approx(0.02)
    assert got["k1_rel_minus_04_pre"] == pytest.approx(0.5 - 0.4 * 0.5)
    assert got["k2_ft_minus_2_zs"] == pytest.approx(0.3 - 0.04)
    assert got["k2_fad_change"] == pytest.approx(-1.0)
    assert got["k3_ft_minus_fs_third"] == pytest.approx(0.15) and got["k3_ft_minus_fs_full"] == pytest.approx(0.1)
    assert got["k4_fs_gain_minus_ft_gain"] == pytest.approx(0.15 - 0.1)
    assert got["k5_easy_minus_hard_rel"] == pytest.approx(0.6)
    assert got["k6_reference_msr"] == pytest.approx(0.9) and got["k6_detector_map"] == 0.9
    assert got["k7_ft_val_presence"] == pytest.approx(0.7)  # the fine-tuned model's audio, validation captions


def test_a_control_stands_in_for_the_run_it_names():
    from workflow.core import claims

    msr = {"reference": 0.9, "zs": 0.02, "ft_1": 0.2, "ft_2": 0.25, "ft_3": 0.3, "fs_1": 0.05, "fs_2": 0.1,
           "fs_3": 0.2, "ft_shuffled_3": 0.01}
    swapped = claims.stand_in(records_like(msr), "run", V.CONTROLS["shuffled_captions"])
    got = V.measure_seed(swapped, {"detector_map": 0.9, "effect_accuracy": 0.95})
    assert got["k2_ft_minus_2_zs"] == pytest.approx(0.01 - 0.04)


def test_the_catalog_bundles_many_files_into_one_reproducible_zip():
    import io
    import zipfile

    from workflow.core.fetch import bundle

    one = bundle({"b/y.oga": b"2", "a/x.oga": b"1"})
    assert one == bundle({"a/x.oga": b"1", "b/y.oga": b"2"})  # the order given does not matter
    with zipfile.ZipFile(io.BytesIO(one)) as zf:
        assert zf.namelist() == ["x.oga", "y.oga"] and zf.read("y.oga") == b"2"


def test_the_aa_nulls_put_another_seeds_comparator_in_place():
    """Two seeds: the comparator's runs of the other seed in the method's runs' place; one seed gives no value."""
    msr = {"reference": 0.9, "zs": 0.02, "ft_1": 0.2, "ft_2": 0.25, "ft_3": 0.3, "fs_1": 0.05, "fs_2": 0.1, "fs_3": 0.2}
    other = msr | {"zs": 0.04, "ft_1": 0.1, "ft_3": 0.4, "fs_1": 0.15, "fs_3": 0.1}
    table = pd.concat([records_like(msr), records_like(other).assign(seed=1)], ignore_index=True)
    ref = {"detector_map": 0.9, "effect_accuracy": 0.95}
    aa = V.aa_nulls(table, ref, V.measure(table, ref))
    assert aa["aa_zs"]["k2_ft_minus_2_zs"] == pytest.approx([0.04 - 0.04, 0.02 - 0.08])
    assert aa["aa_fs"]["k3_ft_minus_fs_third"] == pytest.approx([0.1, -0.1])
    assert aa["aa_ft"]["k4_fs_gain_minus_ft_gain"] == pytest.approx([(0.4 - 0.1) - 0.1, (0.3 - 0.2) - 0.3])
    one = V.aa_nulls(records_like(msr), ref, V.measure(records_like(msr), ref))
    assert np.isnan(one["aa_fs"]["k3_ft_minus_fs_full"]).all()


def test_the_k5_placebo_permutes_only_the_difficulty_labels_among_relations():
    msr = {"reference": 0.9, "zs": 0.02, "ft_1": 0.2, "ft_2": 0.25, "ft_3": 0.3, "fs_1": 0.05, "fs_2": 0.1, "fs_3": 0.2}
    rows = [{"run": run, "seed": seed, "name": f"r{i}", "group": "nested" if i < 3 else "perceptuality", "arity": 1,
             "presence": 0.5, "relation": i / 10, "parsimony": 1.0, "msr": value, "fad": 1.0,
             "val_presence": 0.5}
            for seed in (0, 1) for run, value in msr.items() for i in range(8)]
    table = pd.DataFrame(rows)
    shuffled = V.shuffled_difficulty(table)
    cols = ["run", "seed", "name", "presence", "relation", "parsimony", "msr", "fad"]
    pd.testing.assert_frame_equal(shuffled[cols], table[cols])  # the scores untouched
    for _, t in shuffled.groupby(["run", "seed"]):
        assert t.group.eq("nested").sum() == 3  # as many hard relations, another set of them
    hard = {seed: set(t[t.group.eq("nested")].name) for seed, t in shuffled[shuffled.run.eq("ft_3")].groupby("seed")}
    assert hard[0] != {"r0", "r1", "r2"} and hard[0] != hard[1]
    assert all(set(t[t.group.eq("nested")].name) == hard[seed] for (run, seed), t in shuffled.groupby(["run", "seed"]))
    ref = {"detector_map": 0.9, "effect_accuracy": 0.95}
    got = V.placebos(table, ref)["placebo_shuffled_difficulty"]["k5_easy_minus_hard_rel"]
    assert V.measure(table, ref)["k5_easy_minus_hard_rel"] == pytest.approx([0.4, 0.4])  # 0.3 .. 0.7 against 0 .. 0.2
    assert len(got) == 2 and got != pytest.approx([0.4, 0.4])


def test_the_detector_learns_where_a_tone_sounds():
    import torch

    from workflow.papers.aurelius import models as M

    torch.manual_seed(0)
    rng = np.random.default_rng(0)

    def example():  # a 600 Hz tone (class 0) and/or a 2 kHz tone (class 1), each over a random span
        canvas, labels = S.empty_canvas(), np.zeros((S.n_frames(), 2), np.float32)
        for c, f in enumerate((600.0, 2000.0)):
            if rng.random() < 0.6:
                start, length = rng.uniform(0, 6), rng.uniform(1.5, 3.5)
                S.place(canvas, tone(length, f), start)
                labels[int(round(start * S.FPS)):int(round((start + length) * S.FPS)), c] = 1
        return S.mel(canvas), labels

    data = [example() for _ in range(48)]
    x = torch.from_numpy(np.stack([d[0] for d in data]))
    mean, std = x.mean((0, 1)), x.std((0, 1)) + 1e-6
    x, y = (x - mean) / std, torch.from_numpy(np.stack([d[1] for d in data]))
    det = M.Detector(2, width=16, channels=(4, 8, 8))
    first = []
    M.fit(det, lambda idx: torch.nn.functional.binary_cross_entropy_with_logits(det(x[idx])[0], y[idx]),
          len(x), 25, 16, 0.01, rng, lambda name, epoch, value: first.append(value), "detector")
    assert first[-1] < 0.5 * first[0]
    canvas = S.empty_canvas()
    S.place(canvas, tone(3.0, 600.0), 2.0)  # class 0 alone, 2-5 s
    det.eval()
    with torch.no_grad():
        prob = torch.sigmoid(det(((torch.from_numpy(S.mel(canvas)) - mean) / std)[None])[0])[0].numpy()
    assert R.runs(prob[:, 0], 0.5) and abs(R.runs(prob[:, 0], 0.5)[0][0] - 2 * S.FPS) <= 3  # its onset, +-150 ms
    assert abs(R.runs(prob[:, 0], 0.5)[0][1] - 5 * S.FPS) <= 3
    assert not R.runs(prob[:, 1], 0.5)  # and no 2 kHz tone


def test_the_latent_is_a_whitened_projection_that_decodes_back():
    from workflow.papers.aurelius import models as M

    rng = np.random.default_rng(0)
    mels = rng.standard_normal((20, 8, 3)) @ np.diag([3.0, 1.0, 0.1])  # 8 frames x 3 bands, uneven variances
    pca = M.PatchPCA.fit(mels, patch=2, latent=6)  # full rank (2 x 3): lossless
    z = pca.encode(mels)
    assert z.shape == (20, 4, 6)
    np.testing.assert_allclose(z.reshape(-1, 6).std(0, ddof=1), 1.0, rtol=1e-4)  # whitened
    np.testing.assert_allclose(pca.decode(z), mels, atol=1e-4)
    low = M.PatchPCA.fit(mels, patch=2, latent=2)  # 2 of a patch's 6 values
    kept = 1 - ((low.decode(low.encode(mels)) - mels) ** 2).sum() / ((mels - mels.mean((0, 1))) ** 2).sum()
    assert kept > 0.8  # the leading components carry most of the variance


def test_the_flow_generator_learns_captions_and_commits_to_a_sample():
    import torch

    from workflow.papers.aurelius import models as M

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    tokens, latent = 50, 16
    high, low = np.zeros((tokens, latent), np.float32), np.zeros((tokens, latent), np.float32)
    high[10:25, 8:12] = 3.0  # "high": a pattern of late components over tokens 10-25
    low[25:40, 0:4] = 3.0  # "low": early components over tokens 25-40
    words = torch.tensor([[1] + [M.PAD] * (M.MAX_WORDS - 1), [2] + [M.PAD] * (M.MAX_WORDS - 1)] * 32)
    target = torch.from_numpy(np.stack([high, low] * 32))
    model = M.TTA(vocab=4, d=32, layers=1, heads=2, tokens=tokens, latent=latent)  # PAD, two words, NULL
    losses = []
    M.fit_tta(model, words, target, 60, 16, 3e-3, 0.1, rng, lambda name, epoch, value: losses.append(value))
    assert losses[-1] < 0.7 * losses[0]
    out = M.generate(model, words[:2], steps=8, guidance=2.0, seed=0).numpy()
    high_part, low_part = (slice(10, 25), slice(8, 12)), (slice(25, 40), slice(0, 4))
    assert out[0][high_part].mean() > out[1][high_part].mean() + 1.5  # "high" puts its pattern where it belongs,
    assert out[1][low_part].mean() > out[0][low_part].mean() + 1.5  # "low" its own
    again = M.generate(model, words[:2], steps=8, guidance=2.0, seed=0).numpy()
    np.testing.assert_array_equal(out, again)  # seeded noise: a run's samples are reproducible


def test_a_run_s_loudness_is_its_mean_power_so_every_clip_at_its_rms_is_0_db():
    strikes = np.zeros(2 * S.SR)
    strikes[::S.SR // 2] = 1.0
    x = S.normalise(np.convolve(strikes, np.exp(-np.arange(400) / 40.0))[:2 * S.SR])  # 4 short knocks
    levels = S.frame_levels(x)
    assert R.loudness(levels) == pytest.approx(0.0, abs=0.1)  # its RMS is the normalised one
    assert np.median(levels) < -10  # a frame median puts the same clip far under a steady tone's 0 dB
    assert R.loudness(S.frame_levels(0.1 * x)) == pytest.approx(-20.0, abs=0.1)


@pytest.mark.parametrize("band_stride", [1, 2])
def test_the_detector_keeps_the_frames_whatever_its_first_stride_over_bands(band_stride):
    import torch

    from workflow.papers.aurelius import models as M

    det = M.Detector(3, width=8, channels=(4, 4, 8), band_stride=band_stride)
    logit, level, h = det(torch.zeros(2, S.n_frames(), S.N_MELS))
    assert logit.shape == level.shape == (2, S.n_frames(), 3) and h.shape == (2, S.n_frames() // 2, 8)
    bands = S.N_MELS // band_stride >> 2  # what the frame layers see: the bands left after the 2-D blocks
    assert det.temporal[0].in_channels == 8 * bands
