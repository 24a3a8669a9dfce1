"""SpatialWorld: procedural 3-D scenes with exact ground truth, seen by pinhole cameras (spec 6.3).

A rectangular room (sides 4-8 m, floor z = 0) holds 3-7 objects: a shape (cube, sphere, cylinder, cone, pyramid),
one of 8 colours (every (colour, shape) at most once per scene, so "the red cube" refers), a size (params
data.object_size: 0.5-1.4 m; boxes anisotropic), a yaw, and a dark front (the faces whose outward normal points
along the object's local +x), so the way an object faces can be seen. No two footprints overlap (rejection sampling).

A camera stands on a circle (params data.camera_radius: 3-5 m) around the room's centre at 1.2-1.8 m, yawed towards
the centre (+-10 degrees) and pitched 15-35 degrees down; 48 x 48 pixels, f = 45 px. Rendering is numpy projection and
PIL's painter's algorithm (faces clipped at a near plane, culled when facing away, sorted far to near, Lambert
shading); an instance-id buffer is drawn in the same order, so every object's mask, box and visible pixel count
are exact. Objects with fewer than 12 visible pixels are "not visible" and never asked about.

Two frames: the camera frame (x right, y depth along the optical axis, z up in the image) projects; the
canonical view space of the paper (origin at the optical centre, y along the horizontal viewing direction, z up,
gravity-aligned) decides the relations.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SHAPES = ("cube", "sphere", "cylinder", "cone", "pyramid")
COLOURS = {"red": (200, 40, 40), "green": (40, 160, 60), "blue": (50, 80, 210), "yellow": (220, 200, 40),
           "purple": (140, 60, 170), "orange": (235, 130, 30), "white": (225, 225, 225), "cyan": (40, 190, 200)}
SIZE = 48           # pixels (spec)
FOCAL = 45.0        # pixels at SIZE (spec)
MIN_VISIBLE = 12    # pixels (spec)
NEAR = 0.1          # m: polygons are clipped at this depth
LIGHT = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
SKY, FLOOR = (170, 190, 210), (120, 110, 100)
SEGMENTS = 10       # around cylinders, cones and spheres


@dataclass
class Obj:
    shape: str
    colour: str
    scale: tuple[float, float, float]   # extent along local x, y, z (m)
    yaw: float                          # radians: the local +x (the front) in world coordinates
    pos: tuple[float, float]            # footprint centre on the floor

    @property
    def centre(self) -> np.ndarray:
        return np.array([self.pos[0], self.pos[1], self.scale[2] / 2])

    @property
    def volume(self) -> float:
        box = float(np.prod(self.scale))
        return box * {"cube": 1.0, "sphere": np.pi / 6, "cylinder": np.pi / 4, "cone": np.pi / 12,
                      "pyramid": 1 / 3}[self.shape]

    @property
    def name(self) -> str:
        return f"{self.colour} {self.shape}"


@dataclass
class Scene:
    room: tuple[float, float]
    objects: list[Obj] = field(default_factory=list)


@dataclass
class Camera:
    pos: np.ndarray      # optical centre (world)
    yaw: float           # horizontal viewing direction (radians)
    pitch: float         # negative: looking down

    @property
    def forward(self) -> np.ndarray:
        return np.array([np.cos(self.pitch) * np.cos(self.yaw), np.cos(self.pitch) * np.sin(self.yaw),
                         np.sin(self.pitch)])

    @property
    def right(self) -> np.ndarray:
        return np.array([np.sin(self.yaw), -np.cos(self.yaw), 0.0])

    @property
    def up(self) -> np.ndarray:
        return np.cross(self.right, self.forward)

    def to_camera(self, p: np.ndarray) -> np.ndarray:
        """World points (..., 3) -> camera frame (x right, y depth, z up in the image)."""
        d = np.asarray(p, float) - self.pos
        return np.stack([d @ self.right, d @ self.forward, d @ self.up], -1)

    def to_canonical(self, p: np.ndarray) -> np.ndarray:
        """World points -> the canonical view space: x right, y along the horizontal view direction, z up."""
        d = np.asarray(p, float) - self.pos
        ahead = np.array([np.cos(self.yaw), np.sin(self.yaw), 0.0])
        return np.stack([d @ self.right, d @ ahead, d[..., 2]], -1)

    def project(self, p: np.ndarray, size: int = SIZE) -> np.ndarray:
        """World points in front of the camera -> pixel coordinates (u right, v down)."""
        return pixels(self.to_camera(p), size)


def unit_mesh(shape: str) -> tuple[np.ndarray, list[list[int]]]:
    """(vertices, faces) of a shape of unit extent, footprint centred at the origin, from z = 0 to 1."""
    ring = np.linspace(0, 2 * np.pi, SEGMENTS, endpoint=False)
    circle = np.stack([0.5 * np.cos(ring), 0.5 * np.sin(ring)], 1)
    if shape == "cube":
        v = np.array([[x, y, z] for z in (0, 1) for y in (-.5, .5) for x in (-.5, .5)], float)
        faces = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    elif shape == "pyramid":
        v = np.array([[-.5, -.5, 0], [.5, -.5, 0], [.5, .5, 0], [-.5, .5, 0], [0, 0, 1]], float)
        faces = [[0, 3, 2, 1], [0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]]
    elif shape in ("cylinder", "cone"):
        n = SEGMENTS
        bottom = np.c_[circle, np.zeros(n)]
        if shape == "cylinder":
            v = np.r_[bottom, np.c_[circle, np.ones(n)]]
            faces = [[i, (i + 1) % n, n + (i + 1) % n, n + i] for i in range(n)]
            faces += [list(range(n - 1, -1, -1)), list(range(n, 2 * n))]
        else:
            v = np.r_[bottom, [[0, 0, 1]]]
            faces = [[i, (i + 1) % n, n] for i in range(n)] + [list(range(n - 1, -1, -1))]
    elif shape == "sphere":
        lat = np.linspace(-np.pi / 2, np.pi / 2, 7)
        v = np.array([[0.5 * np.cos(a) * np.cos(b), 0.5 * np.cos(a) * np.sin(b), 0.5 + 0.5 * np.sin(a)]
                      for a in lat for b in ring])
        n = SEGMENTS
        faces = [[i * n + j, i * n + (j + 1) % n, (i + 1) * n + (j + 1) % n, (i + 1) * n + j]
                 for i in range(len(lat) - 1) for j in range(n)]
    else:
        raise ValueError(f"unknown shape {shape!r}; shapes: {', '.join(SHAPES)}")
    return v, faces


def world_mesh(obj: Obj) -> tuple[np.ndarray, list[list[int]]]:
    v, faces = unit_mesh(obj.shape)
    c, s = np.cos(obj.yaw), np.sin(obj.yaw)
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    return (v * np.array(obj.scale)) @ rot.T + np.array([obj.pos[0], obj.pos[1], 0.0]), faces


def footprint(obj: Obj) -> float:
    """Radius of a circle around the footprint (for the no-overlap rule)."""
    return 0.5 * float(np.hypot(obj.scale[0], obj.scale[1]))


def random_scene(rng: np.random.Generator, n_min: int = 3, n_max: int = 7,
                 sizes: tuple[float, float] = (0.3, 1.2)) -> Scene:
    """A room 4-8 m a side with n_min-n_max objects, each `sizes` (m) across."""
    room = (float(rng.uniform(4, 8)), float(rng.uniform(4, 8)))
    scene = Scene(room)
    kinds = rng.permutation([(c, s) for c in COLOURS for s in SHAPES])
    for colour, shape in kinds[:int(rng.integers(n_min, n_max + 1))]:
        for _ in range(100):
            size = rng.uniform(*sizes)
            scale = ((size * rng.uniform(0.6, 1.4), size * rng.uniform(0.6, 1.4), size * rng.uniform(0.6, 1.4))
                     if shape == "cube" else (size, size, size * rng.uniform(0.8, 1.3)))
            obj = Obj(shape, colour, tuple(float(x) for x in scale), float(rng.uniform(0, 2 * np.pi)), (0.0, 0.0))
            r = footprint(obj)
            obj.pos = (float(rng.uniform(r, room[0] - r)), float(rng.uniform(r, room[1] - r)))
            if all(np.hypot(obj.pos[0] - o.pos[0], obj.pos[1] - o.pos[1]) > r + footprint(o) for o in scene.objects):
                scene.objects.append(obj)
                break
    return scene


def random_camera(scene: Scene, rng: np.random.Generator, yaw_around: float | None = None,
                  radii: tuple[float, float] = (4.0, 7.0)) -> Camera:
    """A camera on a circle (radius drawn from `radii`, m) around the room's centre (at angle `yaw_around`, random if
    None), looking inwards."""
    centre = np.array([scene.room[0] / 2, scene.room[1] / 2])
    phi = float(rng.uniform(0, 2 * np.pi)) if yaw_around is None else yaw_around
    radius, height = rng.uniform(*radii), rng.uniform(1.2, 1.8)
    pos = np.array([*(centre + radius * np.array([np.cos(phi), np.sin(phi)])), height])
    yaw = phi + np.pi + np.deg2rad(rng.uniform(-10, 10))
    return Camera(pos, float(yaw), float(-np.deg2rad(rng.uniform(15, 35))))


def clip_near(poly: np.ndarray) -> np.ndarray:
    """Sutherland-Hodgman: the part of a polygon (camera frame, (n, 3)) with depth >= NEAR."""
    out = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0)):
        ina, inb = a[1] >= NEAR, b[1] >= NEAR
        if ina:
            out.append(a)
        if ina != inb:
            t = (NEAR - a[1]) / (b[1] - a[1])
            out.append(a + t * (b - a))
    return np.array(out)


def pixels(c: np.ndarray, size: int = SIZE) -> np.ndarray:
    """Camera-frame points (..., 3) with positive depth -> pixel coordinates (..., 2): the pinhole, f = 45 px at 48."""
    f = FOCAL * size / SIZE
    return np.stack([size / 2 + f * c[..., 0] / c[..., 1], size / 2 - f * c[..., 2] / c[..., 1]], -1)


def to_pixels(cam_poly: np.ndarray, size: int) -> list[tuple[float, float]]:
    """A clipped camera-frame polygon as the vertex list PIL draws."""
    return [tuple(uv) for uv in pixels(cam_poly, size).tolist()]


def render(scene: Scene, cam: Camera, size: int = SIZE):
    """(RGB image (size, size, 3) uint8, instance ids (size, size) uint8: 0 floor or sky, i + 1 object i)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (size, size), SKY)
    ids = Image.new("L", (size, size), 0)
    draw, draw_ids = ImageDraw.Draw(img), ImageDraw.Draw(ids)
    w, d = scene.room
    floor = clip_near(cam.to_camera(np.array([[0, 0, 0], [w, 0, 0], [w, d, 0], [0, d, 0]], float)))
    if len(floor) >= 3:
        draw.polygon(to_pixels(floor, size), fill=FLOOR)
    faces = []
    for i, obj in enumerate(scene.objects):
        v, polys = world_mesh(obj)
        centre = obj.centre
        front = np.array([np.cos(obj.yaw), np.sin(obj.yaw), 0.0])
        for poly in polys:
            p = v[poly]
            normal = np.cross(p[1] - p[0], p[2] - p[0])
            if np.linalg.norm(normal) < 1e-12:
                normal = np.cross(p[2] - p[0], p[-1] - p[0])
            normal = normal / np.linalg.norm(normal)
            if normal @ (p.mean(0) - centre) < 0:  # outward
                normal = -normal
            if normal @ (cam.pos - p.mean(0)) <= 0:  # facing away
                continue
            cam_poly = clip_near(cam.to_camera(p))
            if len(cam_poly) < 3:
                continue
            base = np.array(COLOURS[obj.colour], float)
            if normal @ front > 0.7:
                base = base * 0.25  # the dark front
            shade = base * (0.35 + 0.65 * max(0.0, float(normal @ LIGHT)))
            faces.append((float(cam_poly[:, 1].mean()), to_pixels(cam_poly, size), tuple(int(c) for c in shade), i))
    for _, pix, colour, i in sorted(faces, key=lambda f: -f[0]):
        draw.polygon(pix, fill=colour)
        draw_ids.polygon(pix, fill=i + 1)
    return np.asarray(img), np.asarray(ids)


def annotate(scene: Scene, ids: np.ndarray) -> list[dict]:
    """Per object: visible pixel count, box [x1, y1, x2, y2] (inclusive pixels) or None, visible (>= 12 px)."""
    out = []
    for i in range(len(scene.objects)):
        ys, xs = np.nonzero(ids == i + 1)
        box = [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] if len(xs) else None
        out.append({"pixels": int(len(xs)), "box": box, "visible": len(xs) >= MIN_VISIBLE})
    return out
