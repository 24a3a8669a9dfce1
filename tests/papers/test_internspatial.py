"""Tests for ``internspatial``'s data engine (workflow/papers/internspatial: world.py, qa.py), work in progress:
the camera maths against hand-computed projections, the renderer's masks against them, occlusion, the canonical
frame's relations, the facing bins, and the 19 instruction formats."""
import collections

import numpy as np
import pytest

from workflow.papers.internspatial import qa
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
