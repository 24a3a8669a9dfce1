"""Tests for ``internspatial`` (workflow/papers/internspatial): the camera maths against hand-computed projections,
the renderer's masks against them, occlusion, the canonical frame's relations, the facing bins, the 19 instruction
formats; the data step's draws, the regimes' training sets and controls, the scoring and the claims' metrics on
hand-made answers, and the plan's checks."""
import collections

import numpy as np
import pandas as pd
import pytest

from workflow.core.params import ParamsError

from workflow.papers.internspatial import data as D
from workflow.papers.internspatial import evaluate as E
from workflow.papers.internspatial import plan, qa, records
from workflow.papers.internspatial import world as W


def camera_at_origin():
    """At (0, 0, 1), looking along +x, level: right is -y, up is +z."""
    return W.Camera(np.array([0.0, 0.0, 1.0]), yaw=0.0, pitch=0.0)


def test_the_camera_frame_and_projection_by_hand():
    cam = camera_at_origin()
    np.testing.assert_allclose(cam.right, [0, -1, 0], atol=1e-12)
    np.testing.assert_allclose(cam.up, [0, 0, 1], atol=1e-12)
    # (5, -1, 2): 1 m right, 5 m deep, 1 m up -> u = 24 + 45 / 5, v = 24 - 45 / 5
    np.testing.assert_allclose(cam.to_camera(np.array([5.0, -1.0, 2.0])), [1, 5, 1])
    np.testing.assert_allclose(cam.project(np.array([5.0, -1.0, 2.0])), [33, 15])
    pitched = W.Camera(np.array([0.0, 0.0, 1.0]), yaw=np.pi / 2, pitch=-np.pi / 4)  # looking +y, 45 degrees down
    np.testing.assert_allclose(pitched.project(np.array([0.0, 1.0, 0.0])), [24, 24], atol=1e-9)  # on the axis
    # the canonical frame ignores the pitch: depth is horizontal, z is height above the camera
    np.testing.assert_allclose(pitched.to_canonical(np.array([0.0, 1.0, 0.0])), [0, 1, -1], atol=1e-12)


def test_a_rendered_objects_box_is_its_projected_extent():
    cam = camera_at_origin()
    cube = W.Obj("cube", "red", (1.0, 1.0, 1.0), 0.0, (6.0, 0.0))
    scene = W.Scene((12.0, 12.0), [cube])
    img, ids = W.render(scene, cam)
    ann = W.annotate(scene, ids)[0]
    v, _ = W.world_mesh(cube)
    uv = cam.project(v)
    # the mask's box is the projection of the mesh's corners, to a pixel
    assert ann["visible"] and ann["pixels"] > 12
    assert abs(ann["box"][0] - uv[:, 0].min()) <= 1.5 and abs(ann["box"][2] - uv[:, 0].max()) <= 1.5
    assert abs(ann["box"][1] - uv[:, 1].min()) <= 1.5 and abs(ann["box"][3] - uv[:, 1].max()) <= 1.5
    assert tuple(img[ann["box"][1] + 2, ann["box"][0] + 2]) != W.SKY  # painted there


def test_a_nearer_object_hides_the_one_behind_it():
    cam = camera_at_origin()
    near = W.Obj("cube", "blue", (1.2, 1.2, 1.2), 0.0, (4.0, 0.0))
    far = W.Obj("cube", "red", (0.5, 0.5, 0.5), 0.0, (9.0, 0.0))
    _, ids = W.render(W.Scene((12.0, 12.0), [far, near]), cam)  # listed far first: order must not matter
    ann = W.annotate(W.Scene((12.0, 12.0), [far, near]), ids)
    assert ann[1]["visible"] and not ann[0]["visible"]


def test_polygons_are_clipped_at_the_near_plane():
    poly = np.array([[0.0, -1.0, 0.0], [1.0, 2.0, 0.0], [-1.0, 2.0, 0.0]])
    clipped = W.clip_near(poly)
    assert len(clipped) == 4 and clipped[:, 1].min() >= W.NEAR - 1e-12


def test_facing_bins_relative_to_the_camera():
    cam = W.Camera(np.array([0.0, 0.0, 1.5]), yaw=0.3, pitch=-0.4)
    obj = lambda yaw: W.Obj("cone", "red", (1, 1, 1), yaw, (5.0, 0.0))  # noqa: E731
    assert qa.facing(obj(0.3), cam) == "away"
    assert qa.facing(obj(0.3 + np.pi), cam) == "toward"
    assert qa.facing(obj(0.3 - np.pi / 2), cam) == "right"
    assert qa.facing(obj(0.3 + np.pi / 2), cam) == "left"
    assert qa.facing(obj(0.3 - np.pi / 4), cam) == "away_right"


def test_position_and_size_answers_follow_the_geometry():
    rng = np.random.default_rng(0)
    checked = 0
    for s in range(40):
        scene = W.random_scene(rng)
        cam = W.random_camera(scene, rng)
        _, ids = W.render(scene, cam)
        ann = W.annotate(scene, ids)
        xyz = qa.canonical(scene, cam)
        for it in qa.isb_items(s, scene, cam, ann, rng):
            if it["category"] == "position":
                a, b = it["refs"]
                word = it["question"].split("{A} ")[1].split(" {B}")[0]
                holds = {"left of": xyz[a, 0] < xyz[b, 0], "right of": xyz[a, 0] > xyz[b, 0],
                         "in front of": xyz[a, 1] < xyz[b, 1], "behind": xyz[a, 1] > xyz[b, 1]}[word]
                assert it["answer"] == ("yes" if holds else "no")
                checked += 1
            assert all(ann[r]["visible"] for r in it["refs"])  # never asked about an unseen object
    assert checked > 20


def test_nineteen_formats_and_their_cues():
    assert len(qa.FORMATS) == 19 == len(set(qa.FORMATS)) and "mark+raw" not in qa.FORMATS
    it = qa.item("isb", "position", 0, [0], "is {A} left of {B} ?", [0, 1], "yes")
    names = ["red cube", "blue cone"]
    ann = [{"box": [1, 2, 10, 12]}, {"box": [20, 5, 30, 9]}]
    assert qa.question_text(it, names, ann, "nl+raw") == "is the red cube left of the blue cone ?"
    assert qa.question_text(it, names, ann, "refbox+masks") == (
        "is <ref> region </ref> <box> n1 n2 n10 n12 </box> left of <ref> region </ref> <box> n20 n5 n30 n9 </box> ?")
    assert qa.question_text(it, names, ann, "mark+boxes") == "is object mark1 left of object mark2 ?"
    # the wrong-cue control: the boxes are another object's, the names stay
    assert "n20 n5 n30 n9" in qa.question_text(it, names, ann, "capbox+raw", cues=[1, 0]).split("left of")[0]


def test_overlays_draw_in_the_marks_colour_and_leave_raw_alone():
    image = np.zeros((48, 48, 3), np.uint8)
    ids = np.zeros((48, 48), np.uint8)
    ids[10:20, 10:20] = 1
    ann = [{"box": [10, 10, 19, 19]}]
    assert qa.overlay(image, ids, ann, "nl+raw", [0]) is image
    boxed = qa.overlay(image, ids, ann, "nl+boxes", [0])
    assert tuple(boxed[10, 15]) == qa.MARK_COLOURS[0] and tuple(boxed[15, 15]) == (0, 0, 0)
    masked = qa.overlay(image, ids, ann, "nl+masks", [0])
    assert masked[15, 15].sum() > 0 and masked[5, 5].sum() == 0


def test_balance_gives_as_many_yes_as_no_per_template():
    rng = np.random.default_rng(0)
    items = [qa.item("isb", "size", 0, [0], "is {A} bigger than {B} ?", [0, 1], "yes") for _ in range(7)]
    items += [qa.item("isb", "size", 0, [0], "is {A} bigger than {B} ?", [0, 1], "no") for _ in range(3)]
    items += [qa.item("isb", "counting", 0, [0], "how many objects are there ?", [], "c3")]
    counts = collections.Counter(it["answer"] for it in qa.balance(items, rng))
    assert counts == {"yes": 3, "no": 3, "c3": 1}


def test_an_unknown_shape_is_named():
    with pytest.raises(ValueError, match="unknown shape 'torus'"):
        W.unit_mesh("torus")


def items_of(kinds: dict[str, int]) -> list[dict]:
    return [qa.item(kind, "c", 0, [0], "q", [], "yes") | {"n": i} for kind, k in kinds.items() for i in range(k)]


def test_the_data_step_draws_at_most_each_count_in_order():
    items = items_of({"isb": 30, "vsi": 20, "general": 10})
    rng = np.random.default_rng(0)
    train = D.draw(items, {"spatial": 25, "general": 4}, "train", rng)
    assert sum(it["kind"] != "general" for it in train) == 25 and sum(it["kind"] == "general" for it in train) == 4
    test = D.draw(items, {"isb": 5, "vsi": 50, "general": 10}, "test", rng)
    assert collections.Counter(it["kind"] for it in test) == {"isb": 5, "vsi": 20, "general": 10}
    isb = [it["n"] for it in test if it["kind"] == "isb"]
    assert isb == sorted(isb)  # drawn, not reordered


def fake_data(n_general=6, n_spatial=8):
    """A methods.Data stand-in: training_set reads only items and wrong_cues only the annotations."""
    from workflow.papers.internspatial import methods as M

    general = [qa.item("general", "attribute", 0, [0], "what colour is the cone ?", [], "red") for _ in range(n_general)]
    spatial = [qa.item("isb", "position", 0, [0], "is {A} left of {B} ?", [0, 1], "yes" if i % 4 else "no")
               for i in range(n_spatial)]
    spatial += [qa.item("vsi", "rotation_angle", 0, [0, 1], "how far ?", [], "deg90")]
    data = M.Data.__new__(M.Data)
    data.items = {"train": general + spatial, "test": []}
    data.scenes = [{"anns": [[{"visible": True}, {"visible": True}, {"visible": True}]] * 2}]
    return M, data


def test_m1_and_m2_see_the_same_items_and_only_m2_varies_the_formats():
    M, data = fake_data()
    m1 = M.training_set(data, "m1", np.random.default_rng(0))
    m2 = M.training_set(data, "m2", np.random.default_rng(0))
    assert [id(r[0]) for r in m1] == [id(r[0]) for r in m2]
    assert {r[1] for r in m1} == {"nl+raw"}
    assert len({r[1] for r in m2 if r[0]["kind"] == "isb"}) > 1
    assert all(r[1] == "nl+raw" for r in m2 if r[0]["kind"] != "isb")  # multi-view items stay natural language
    assert sum(r[0]["kind"] == "general" for r in m2) == 3  # half the general QA (spec)
    assert [r[0]["kind"] for r in M.training_set(data, "m0", np.random.default_rng(0))] == ["general"] * 6


def test_the_controls_break_only_what_they_name():
    M, data = fake_data(n_spatial=40)
    rng = np.random.default_rng(1)
    shuffled = M.training_set(data, "m2_shuffled", rng)
    before = collections.Counter(it["answer"] for it in data.items["train"] if it["category"] == "position")
    after = [r[0] for r in shuffled if r[0]["category"] == "position"]
    assert collections.Counter(it["answer"] for it in after) == before  # the priors are kept
    originals = [it for it in data.items["train"] if it["category"] == "position"]
    assert any(a["answer"] != o["answer"] for a, o in zip(after, originals))  # the pairing is broken
    assert all(o["answer"] in ("yes", "no") for o in originals)  # the items themselves untouched
    wrong = M.training_set(data, "m2_wrongcue", rng)
    assert all(r[2] is not None and r[2] != r[0]["refs"] for r in wrong if r[0]["refs"])
    assert not any(r[0]["kind"] == "general" for r in M.training_set(data, "m2_nogeneral", rng))


def test_scoring_against_the_truth_by_category_and_format():
    test = [qa.item("isb", "position", 0, [0], "q", [], "yes"), qa.item("isb", "size", 0, [0], "q", [], "no"),
            qa.item("isb", "position", 0, [0], "q", [], "no"), qa.item("vsi", "count_room", 0, [0, 1], "q", [], "c3")]
    answers = {f"isb/{f}": ["yes", "yes", "yes"] for f in qa.FORMATS} | {"vsi": ["c3"], "general": []}
    rows = pd.DataFrame(records.score(answers, test))
    nl = rows[rows.format.eq("nl+raw") & rows.set.eq("isb")].set_index("category").accuracy
    assert nl["position"] == 0.5 and nl["size"] == 0.0
    assert len(rows[rows.set.eq("isb")]) == 2 * 19
    assert rows[rows.set.eq("vsi")].accuracy.tolist() == [1.0]
    with pytest.raises(ValueError):  # a run that answered fewer items than asked is an error, not a shorter score
        records.score(answers | {"vsi": []}, test)


def score_rows(regime: str, isb: dict[str, float], vsi: float, general: float, spread: float = 0.0) -> list[dict]:
    """A run's score rows: ISB categories at the given accuracies, format k shifted by spread * (k - 9)."""
    rows = [{"set": "isb", "format": f, "category": c, "accuracy": a + spread * (k - 9), "n": 10}
            for k, f in enumerate(qa.FORMATS) for c, a in isb.items()]
    rows += [{"set": "vsi", "format": "nl+raw", "category": c, "accuracy": vsi, "n": 10}
             for c in ("rotation_angle", "count_room")]
    rows += [{"set": "general", "format": "nl+raw", "category": "attribute", "accuracy": general, "n": 10}]
    return [r | {"regime": regime, "seed": 0} for r in rows]


def test_the_claims_metrics_on_hand_made_scores():
    cats = {"position": 0.8, "rotation": 0.3, "size": 0.7}
    rows = score_rows("m0", dict.fromkeys(cats, 0.0), 0.1, 0.5)
    rows += score_rows("m1", {"position": 0.6, "rotation": 0.3, "size": 0.6}, 0.3, 0.4, spread=0.01)
    rows += score_rows("m2", cats, 0.4, 0.49, spread=0.002)
    prior = [{"set": "isb", "format": "nl+raw", "category": c, "accuracy": 0.5, "n": 10, "regime": "prior",
              "seed": -1} for c in cats]
    prior += [{"set": "general", "format": "nl+raw", "category": "attribute", "accuracy": 0.15, "n": 10,
               "regime": "chance", "seed": -1}]
    m = E.measure(pd.DataFrame(rows + prior))
    assert m["k6_general_over_chance"] == pytest.approx([0.49 - 0.15])  # the weaker of M0 and M2 over chance
    assert m["k1_isb_gain"] == pytest.approx([0.6])
    assert m["k2_vsi_gain"] == pytest.approx([0.3])
    assert m["k3_std_ratio"] == pytest.approx([0.2])
    assert m["k4_general_change"] == pytest.approx([0.01])
    assert m["k5_rotation_below_others"] == pytest.approx([0.4])
    # M1 in natural language on the raw image (format index 0: shifted by -9 spread) against the 0.5 priors
    assert m["k0_m1_over_prior"] == pytest.approx([(0.6 + 0.3 + 0.6) / 3 - 0.09 - 0.5])
    flat = [r | {"accuracy": 0.5} if r["regime"] == "m1" else r for r in rows]
    assert np.isnan(E.measure(pd.DataFrame(flat + prior))["k3_std_ratio"][0])  # no spread to narrow: undecided


def test_the_plan_names_what_is_missing():
    p = {"plan": {"regimes": ["m0", "m1", "m2"], "seeds": [0]}, "train": {"d": 64, "heads": 4}}
    with pytest.raises(ParamsError, match="m2_shuffled"):
        plan.check(p)
    p["plan"]["regimes"] += list(plan.CONTROLS)
    plan.check(p)
    p["train"]["d"] = 30
    with pytest.raises(ParamsError, match="multiple of heads"):
        plan.check(p)
    assert plan.runs(p["plan"])[:2] == [("m0", 0), ("m1", 0)]


def test_the_shuffled_control_is_the_same_under_any_hash_seed():
    """Two clean runs must train on the same shuffled answers; a set's order varies with PYTHONHASHSEED."""
    import os
    import subprocess
    import sys

    probe = ("import numpy as np; from tests.papers.test_internspatial import fake_data, qa; M, data = fake_data(); "
             "data.items['train'] += [qa.item('isb', c, 0, [0], 'q ?', [], f'a{i}') for c in 'abcdef' for i in range(9)];"
             "print([r[0]['answer'] for r in M.training_set(data, 'm2_shuffled', np.random.default_rng(0))])")
    answers = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in (1, 2, 3, 4)}
    assert len(answers) == 1


def test_the_aa_nulls_put_another_seeds_comparator_in_m2s_place():
    """Two seeds: M0 (or M1) of the other seed in M2's place; one seed gives no value."""
    cats = {"position": 0.8, "rotation": 0.3, "size": 0.7}
    rows = []
    for seed, m0 in ((0, 0.0), (1, 0.1)):
        rows += [r | {"seed": seed} for r in score_rows("m0", dict.fromkeys(cats, m0), 0.1 + m0, 0.5 - m0)
                 + score_rows("m1", {"position": 0.6, "rotation": 0.3, "size": 0.6}, 0.3, 0.4, spread=0.01 * (1 + seed))
                 + score_rows("m2", cats, 0.4, 0.49, spread=0.002)]
    prior = [{"set": "isb", "format": "nl+raw", "category": c, "accuracy": 0.5, "n": 10, "regime": "prior",
              "seed": -1} for c in cats]
    prior += [{"set": "general", "format": "nl+raw", "category": "attribute", "accuracy": 0.15, "n": 10,
               "regime": "chance", "seed": -1}]
    table = pd.DataFrame(rows + prior)
    aa = E.aa_nulls(table, E.measure(table))
    assert aa["aa_m0"]["k1_isb_gain"] == pytest.approx([0.1, -0.1])
    assert aa["aa_m0"]["k4_general_change"] == pytest.approx([0.1, 0.1])
    assert aa["aa_m1"]["k3_std_ratio"] == pytest.approx([2.0, 0.5])
    one = pd.DataFrame([r for r in rows if r["seed"] == 0] + prior)
    assert np.isnan(E.aa_nulls(one, E.measure(one))["aa_m1"]["k3_std_ratio"]).all()


def test_the_k4_placebo_permutes_only_the_general_answers_within_each_question_type():
    M, data = fake_data(n_spatial=20)
    general = [qa.item("general", "attribute", 0, [0], f"what colour is the {s} ?", [], c)
               for s, c in zip(["cone", "cube", "ball", "cup"] * 5, ["red", "blue", "green", "red", "grey"] * 4)]
    general += [qa.item("general", "attribute", 0, [0], f"what shape is the {c} object ?", [], s)
                for s, c in zip(["cone", "cube", "ball", "cup"] * 5, ["red", "blue", "green", "red", "grey"] * 4)]
    data.items["train"] = general + [it for it in data.items["train"] if it["kind"] != "general"]
    m2 = M.training_set(data, "m2", np.random.default_rng(4))
    placebo = M.training_set(data, "m2_shuffledgeneral", np.random.default_rng(4))
    assert [(r[0]["question"], r[1], r[2]) for r in m2] == [(r[0]["question"], r[1], r[2]) for r in placebo]  # same items, formats
    assert [r[0]["answer"] for r in m2 if r[0]["kind"] != "general"] == [r[0]["answer"] for r in placebo if r[0]["kind"] != "general"]
    for kind in ("what colour", "what shape"):  # per question type: the same answers (priors), another pairing
        own = [r[0]["answer"] for r in m2 if r[0]["question"].startswith(kind)]
        moved = [r[0]["answer"] for r in placebo if r[0]["question"].startswith(kind)]
        assert collections.Counter(own) == collections.Counter(moved) and own != moved
    assert {it["answer"] for it in general} == {"red", "blue", "green", "grey", "cone", "cube", "ball", "cup"}  # untouched
    a, b = np.random.default_rng(4), np.random.default_rng(4)
    M.training_set(data, "m2", a)
    M.training_set(data, "m2_shuffledgeneral", b)
    assert a.integers(1000) == b.integers(1000)  # the training's batches draw on from the same state


def test_answers_are_chosen_among_the_items_candidates_and_a_uniform_model_scores_chance():
    import torch

    from workflow.papers.internspatial import methods as M

    shape = qa.item("general", "attribute", 0, [0], "what shape is the red object ?", [], "cone")
    items = ([qa.item("isb", "position", 0, [0], "q", [], "yes")] * 300
             + [qa.item("isb", "rotation", 0, [0], "q", [], "left")] * 300 + [shape] * 300)
    logits = torch.zeros(len(items), len(qa.ANSWERS))
    logits[:, qa.ANSWERS.index("red")] = 10.0  # the largest logit is no candidate of any of these items
    said = M.choose(logits + torch.randn(logits.shape, generator=torch.Generator().manual_seed(0)), items)
    assert all(a in qa.candidates(it) for a, it in zip(said, items))
    right = np.array([a == it["answer"] for a, it in zip(said, items)]).reshape(3, 300).mean(1)
    np.testing.assert_allclose(right, [1 / 2, 1 / 8, 1 / 5], atol=0.08)  # chance, not 0
    assert qa.candidates(qa.item("general", "attribute", 0, [0], "what colour is the cone ?", [], "red")) == tuple(
        W.COLOURS)
    with pytest.raises(ValueError, match="add them to qa.CANDIDATES"):
        qa.candidates(qa.item("isb", "weight", 0, [0], "q", [], "yes"))


def test_chance_rows_average_one_over_the_candidates():
    record = {"items": {"test": [qa.item("isb", "position", 0, [0], "q", [], "yes"),
                                 qa.item("isb", "counting", 0, [0], "q", [], "c2"),
                                 qa.item("general", "attribute", 0, [0], "what colour is the cone ?", [], "red"),
                                 qa.item("general", "attribute", 0, [0], "what shape is the red object ?", [],
                                         "cone")]}}
    rows = {(r["set"], r["category"]): r["accuracy"] for r in records.chance(record)}
    assert rows == {("isb", "counting"): pytest.approx(0.1), ("isb", "position"): 0.5,
                    ("general", "attribute"): pytest.approx((1 / 8 + 1 / 5) / 2)}


def test_cell_targets_label_each_cell_with_its_largest_object():
    from workflow.papers.internspatial import methods as M

    ids = np.zeros((48, 48), np.uint8)
    ids[0:8, 0:8] = 1          # cell (0, 0): object 0 only
    ids[8:16, 8:11] = 2        # cell (1, 1): 24 pixels of object 1 ...
    ids[8:16, 11:16] = 1       # ... and 40 of object 0: object 0 wins
    ids[40:42, 40:41] = 2      # cell (5, 5): 2 pixels, under MIN_CELL: empty
    labels = [(3, 1, np.array([1.0, 2.0, 0.5, -1.0], np.float32)), (5, 4, np.zeros(4, np.float32))]
    colour, shape, reg, mask = M.cell_targets(ids, labels)
    assert mask.sum() == 2 and mask[0, 0] and mask[1, 1] and not mask[5, 5]
    assert colour[1, 1] == 3 and shape[1, 1] == 1 and colour[0, 0] == 3
    np.testing.assert_allclose(reg[0, 0], [1.0, 2.0, 0.5, -1.0])


def test_the_encoders_targets_are_the_renderers_labels():
    """A red cone in front of the camera: its cells say red, cone, its canonical depth and its height."""
    from workflow.papers.internspatial import methods as M

    cam = camera_at_origin()
    cone = W.Obj("cone", "red", (2.0, 2.0, 2.0), 0.0, (5.0, 0.0))
    scene = W.Scene((12.0, 12.0), [cone])
    _, ids = W.render(scene, cam)
    ann = W.annotate(scene, ids)
    ann[0]["xyz"] = cam.to_canonical(cone.centre).tolist()
    record = {"names": [cone.name], "anns": [ann, ann], "sizes": [[cone.scale[2], float(np.log(cone.volume))]]}
    colour, shape, reg, mask = M.cell_targets(ids, M.object_labels(record, 0))
    assert mask.sum() >= 2
    assert set(colour[mask]) == {M.COLOURS.index("red")} and set(shape[mask]) == {M.SHAPES.index("cone")}
    np.testing.assert_allclose(reg[mask][:, 1] * M.REG_SCALE[1], 5.0, atol=1e-5)  # depth along the view: 5 m
    np.testing.assert_allclose(reg[mask][:, 2] * M.REG_SCALE[2], 2.0, atol=1e-5)  # height


def test_the_validation_split_is_drawn_like_the_test_split():
    items = items_of({"isb": 30, "vsi": 20, "general": 10})
    val = D.draw(items, {"isb": 5, "vsi": 50, "general": 10}, "val", np.random.default_rng(0))
    assert collections.Counter(it["kind"] for it in val) == {"isb": 5, "vsi": 20, "general": 10}
