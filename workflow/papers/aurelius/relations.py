"""AudioRelSet-mini: the paper's 21 basic relations in its six classes, nested relations composed from them, five
re-authored text templates each, how a relation's audio is laid out on the 10 s canvas, and how a detection is
judged against it (the official MSR protocol's Presence, Relation and Parsimony; spec 5.3).

A layout is deterministic given the text (events 0.5 s apart from 0.5 s on; spec risk (i): a one-step regressor
averages random onsets into mush); the clips themselves vary. Disjunction and XOR render their first event,
Implication both, Negation only the event that is not negated.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import sounds as S


@dataclass(frozen=True)
class Relation:
    name: str
    group: str  # the paper's relation class, or "nested"
    arity: int
    templates: tuple[str, ...]


def _r(name, group, arity, *templates):
    return Relation(name, group, arity, templates)


BASIC = (
    _r("precedence", "temporality", 2, "{A} followed by {B}", "first {A} then {B}", "{A} and then {B}",
       "{A} before {B}", "{A} comes first and {B} comes next"),
    _r("succession", "temporality", 2, "{A} after {B}", "{A} following {B}", "{B} first and {A} after it",
       "{A} comes after {B}", "{A} once {B} has ended"),
    _r("simultaneity", "temporality", 2, "{A} and {B} at the same time", "{A} while {B}", "{A} together with {B}",
       "{A} over {B} at once", "{A} and {B} simultaneously"),
    _r("periodicity", "temporality", 1, "{A} repeating regularly", "{A} again and again", "periodic {A}",
       "{A} at a steady interval", "{A} recurring over and over"),
    _r("count", "count", 1, "{A} {N} times", "{N} times {A}", "{A} repeated {N} times", "exactly {N} sounds of {A}",
       "{A} heard {N} times"),
    _r("balancing", "perceptuality", 2, "{A} dominating a faint {B}", "loud {A} then soft {B}",
       "{A} louder than {B}", "a loud {A} and then a quiet {B}", "{A} strong and {B} faint"),
    _r("blending", "perceptuality", 2, "{A} and {B} blended equally", "{A} then {B} at an even level",
       "{A} and {B} equally loud", "an even blend of {A} and {B}", "{A} as loud as {B}"),
    _r("reverberation", "perceptuality", 1, "{A} with reverb", "{A} echoing in a hall", "reverberant {A}",
       "{A} in a large room", "{A} with a long echo"),
    _r("time_stretching", "perceptuality", 1, "slowed down {A}", "{A} stretched in time", "{A} played slowly",
       "{A} at half speed", "a slow motion {A}"),
    _r("amplification", "perceptuality", 1, "loud {A}", "{A} amplified", "{A} turned up", "a very loud {A}",
       "{A} at high volume"),
    _r("attenuation", "perceptuality", 1, "quiet {A}", "{A} attenuated", "{A} turned down", "a very quiet {A}",
       "{A} at low volume"),
    _r("closeness", "spatiality", 1, "{A} nearby", "{A} close by", "{A} right next to us", "a near {A}",
       "{A} close to the listener"),
    _r("farness", "spatiality", 1, "distant {A}", "{A} far away", "{A} in the distance", "a remote {A}",
       "{A} far from the listener"),
    _r("proximity", "spatiality", 2, "{A} and {B} at the same distance", "{A} then {B} equally near",
       "{A} and {B} equally far", "{A} and then {B} from one spot", "{A} then {B} at one distance"),
    _r("approaching", "spatiality", 1, "{A} coming closer", "{A} approaching", "{A} getting nearer",
       "an approaching {A}", "{A} moving towards us"),
    _r("departuring", "spatiality", 1, "{A} moving away", "{A} departing", "{A} fading into the distance",
       "a departing {A}", "{A} going away from us"),
    _r("conjunction", "compositionality", 2, "{A} and {B}", "both {A} and {B}", "{A} as well as {B}",
       "{A} along with {B}", "{A} plus {B}"),
    _r("disjunction", "compositionality", 2, "{A} or {B}", "either {A} or {B} or both", "{A} or else {B}",
       "one of {A} or {B}", "{A} or perhaps {B}"),
    _r("negation", "compositionality", 2, "{B} but no {A}", "{B} without {A}", "{B} and not {A}",
       "only {B} and never {A}", "{B} with no {A}"),
    _r("xor", "compositionality", 2, "either {A} or {B} but not both", "only one of {A} and {B}",
       "{A} or {B} not both", "exactly one of {A} and {B}", "just {A} or just {B}"),
    _r("implication", "compositionality", 2, "if {A} then {B}", "{A} implies {B}", "whenever {A} also {B}",
       "{B} if there is {A}", "{A} only with {B}"),
)
BY_NAME = {r.name: r for r in BASIC}
# A unary relation's effect on its event (the effect classifier's label) or its gain.
EFFECT_OF = {"reverberation": "reverb", "time_stretching": "stretch", "amplification": "amplify",
             "attenuation": "attenuate", "approaching": "approach", "departuring": "depart", "farness": "far",
             "closeness": "none"}
# nested = an outer temporal relation whose A is modified. The paper's binary temporal nestings are Precedence_X and
# Succession_X (the official AudioRelSet and its NestedCombRelEval): Simultaneity is never an outer relation there.
OUTER = ("precedence", "succession")
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five"}


def nested() -> tuple[Relation, ...]:
    """outer(U(A), B) for each temporal outer relation and each unary perceptual/spatial U (the paper's
    Precedence_Approaching_Binary, ...): 2 x 8 = 16 relations of arity 2."""
    out = []
    for outer in OUTER:
        for inner in EFFECT_OF:
            phrase = BY_NAME[inner].templates[0]
            out.append(Relation(f"{outer}__{inner}", "nested", 2,
                                tuple(t.replace("{A}", phrase) for t in BY_NAME[outer].templates)))
    return tuple(out)


def relations(include_nested: bool) -> tuple[Relation, ...]:
    return BASIC + (nested() if include_nested else ())


def parts(name: str) -> tuple[str, str | None]:
    """(outer relation, inner unary relation or None)."""
    outer, _, inner = name.partition("__")
    return outer, inner or None


def caption(rel: Relation, phrases: list[str], template: int, n: int | None = None) -> str:
    text = rel.templates[template].replace("{A}", phrases[0]).replace("{N}", NUMBERS.get(n, ""))
    return text.replace("{B}", phrases[1]) if rel.arity > 1 or "{B}" in text else text


# -- layout and rendering -------------------------------------------------------------------------------------------

def layout(name: str, n: int | None = None) -> tuple[str, list[tuple[int, str]]]:
    """(arrangement, [(slot, effect), ...]): slot 0 is A, 1 is B; arrangement 'seq' (0.5 s apart) or 'overlap'
    (both from 0.5 s) or 'repeat' (short copies of A, 0.8 s apart)."""
    outer, inner = parts(name)
    first = EFFECT_OF.get(inner, "none") if inner else "none"
    table = {
        "precedence": ("seq", [(0, first), (1, "none")]),
        "succession": ("seq", [(1, "none"), (0, first)]),
        "simultaneity": ("overlap", [(0, first), (1, "none")]),
        "periodicity": ("repeat", [(0, "none")] * 4),
        "count": ("repeat", [(0, "none")] * (n or 0)),
        "balancing": ("seq", [(0, "balance_loud"), (1, "balance_soft")]),  # official: B after A (both)
        "blending": ("seq", [(0, "none"), (1, "none")]),
        "proximity": ("seq", [(0, "none"), (1, "none")]),
        "conjunction": ("seq", [(0, "none"), (1, "none")]),
        "disjunction": ("seq", [(0, "none")]),
        "negation": ("seq", [(1, "none")]),
        "xor": ("seq", [(0, "none")]),
        "implication": ("seq", [(0, "none"), (1, "none")]),
    }
    if outer in EFFECT_OF:
        return "seq", [(0, EFFECT_OF[outer])]
    return table[outer]


BALANCE = {"balance_loud": 1.3, "balance_soft": 0.1}  # official config: the one x1.3, the other x0.1
REPEAT_S, GAP_S, START_S = 1.2, 0.8, 0.5


def render_parts(name: str, clips: list[np.ndarray], rng: np.random.Generator, n: int | None = None):
    """Each occurrence of one pair alone on its own canvas, with its {slot, effect, start, end}, from one clip per
    slot (the evaluator labels a training mixture from each part's span)."""
    arrangement, events = layout(name, n)
    out, t = [], START_S
    for slot, effect in events:
        x = clips[slot]
        if arrangement == "repeat":
            x = x[:int(REPEAT_S * S.SR)]
        if effect == "stretch":
            x = x[:int(2.4 * S.SR)]  # 4.8 s once stretched: two stretched events still fit the canvas
        x = x * BALANCE[effect] if effect in BALANCE else S.apply(x, effect, rng)
        alone = S.empty_canvas()
        start, end = S.place(alone, x, START_S if arrangement == "overlap" else t)
        out.append((alone, {"slot": slot, "effect": effect, "start": start, "end": end}))
        t = end + (GAP_S if arrangement == "repeat" else 0.5)
    return out


def render(name: str, clips: list[np.ndarray], rng: np.random.Generator, n: int | None = None):
    """The canvas of one pair and its occurrences [{slot, effect, start, end}]."""
    parts = render_parts(name, clips, rng, n)
    return sum((alone for alone, _ in parts), S.empty_canvas()), [occ for _, occ in parts]


# -- judging a detection (the MSR protocol) -------------------------------------------------------------------------

THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
MIN_RUN_S = 1.0
LOUDNESS = {"closeness": 0.3, "farness": 0.4, "proximity": 0.2, "balancing": 0.5, "blending": 0.2}  # official


def runs(prob: np.ndarray, theta: float) -> list[tuple[int, int]]:
    """[start, end) frame runs where prob >= theta for at least MIN_RUN_S."""
    on = np.concatenate([[False], prob >= theta, [False]])
    edges = np.flatnonzero(np.diff(on.astype(int)))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2]) if b - a >= MIN_RUN_S * S.FPS]


def loudness(frame_levels: np.ndarray) -> float:
    """A run's level (dB): the mean power of its frames, as the official check takes the norm of the event's
    samples. A clip's level is its RMS (every clip is normalised to the same RMS before a relation's gain), so this is
    0 dB for an unmodified clip of any class; a frame median would put a percussive clip, loud in few frames, many dB
    under a sustained one of the same RMS (and fail closeness, proximity and blending on the reference)."""
    return float(10 * np.log10(np.mean(10 ** (np.asarray(frame_levels, np.float64) / 10))))


def ratio(level_a: float, level_b: float) -> float:
    """The smaller over the larger loudness (amplitudes from dB levels)."""
    a, b = 10 ** (level_a / 20), 10 ** (level_b / 20)
    return min(a, b) / max(a, b)


def before(x: dict, y: dict) -> bool:
    """Run x ends before run y starts (0.4 s of tolerance for a detector's smeared offset)."""
    return x["start"] < y["start"] and x["end"] <= y["start"] + 0.4


def relation_holds(name: str, a: list[dict], b: list[dict], n: int | None) -> bool:
    """The relation-specific check on A's and B's detected runs [{start, end, level, effect}] (seconds, dB)."""
    outer, inner = parts(name)
    if inner and not any(unary_holds(inner, r) for r in a):
        return False
    if outer in EFFECT_OF:
        return any(unary_holds(outer, r) for r in a)
    if outer == "precedence":
        return any(before(x, y) for x in a for y in b)
    if outer == "succession":
        return any(before(y, x) for x in a for y in b)
    if outer == "simultaneity":
        return any(min(x["end"], y["end"]) - max(x["start"], y["start"]) >= 0.6 for x in a for y in b)
    if outer == "periodicity":
        gaps = np.diff(sorted(x["start"] for x in a))
        return len(a) >= 3 and float(gaps.std()) <= 0.25 * float(gaps.mean())
    if outer == "count":
        return len(a) == n
    if outer == "balancing":  # official: a B after an A, A the louder by the threshold
        return any(before(x, y) and x["level"] > y["level"] and ratio(x["level"], y["level"]) <= LOUDNESS[outer]
                   for x in a for y in b)
    if outer == "blending":  # official: a B after an A, as loud within the threshold
        return any(before(x, y) and ratio(x["level"], y["level"]) >= 1 - LOUDNESS[outer] for x in a for y in b)
    if outer == "proximity":
        if not (a and b):
            return False
        return ratio(max(x["level"] for x in a), max(y["level"] for y in b)) >= 1 - LOUDNESS[outer]
    has_a, has_b = bool(a), bool(b)
    return {"conjunction": has_a and has_b, "disjunction": has_a or has_b, "negation": has_b and not has_a,
            "xor": has_a != has_b, "implication": (not has_a) or has_b}[outer]


def unary_holds(name: str, run: dict) -> bool:
    """A unary relation on one run: loudness for closeness/farness (relative to a clip's normalised level),
    the effect classifier for the rest."""
    if name == "closeness":
        return 10 ** (run["level"] / 20) >= 1 - LOUDNESS["closeness"]
    if name == "farness":
        return 10 ** (run["level"] / 20) <= LOUDNESS["farness"]
    return run["effect"] == EFFECT_OF[name]


def msr(pair: dict, detected: dict[int, list[dict]]) -> dict[str, float]:
    """Presence, Relation, Parsimony and MSR = their product for one pair at one threshold. detected: class index
    -> runs; pair: its relation, classes (A, B), n, and the reference's occurrences."""
    classes = pair["classes"]
    a, b = detected.get(classes[0], []), detected.get(classes[1], []) if len(classes) > 1 else []
    present = all(detected.get(classes[o["slot"]]) for o in pair["occurrences"])
    rel = relation_holds(pair["relation"], a, b, pair.get("n"))
    n_pred = sum(len(v) for v in detected.values())
    par = float(np.exp(-0.1 * abs(n_pred - len(pair["occurrences"]))))
    return {"presence": float(present), "relation": float(rel), "parsimony": par,
            "msr": float(present) * float(rel) * par}
