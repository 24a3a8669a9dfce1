"""Regular languages as exact DFAs, the NSP labelling, samplers and DFA comparison (spec 5.3 "Languages").

Words are tuples of symbols (single-character strings here); any iterable of symbols is accepted, so the
string ``"0110"`` is the word ``("0", "1", "1", "0")``.

NSP labels (paper, claim 1): for a prefix ``y`` the membership bit ``1[y in L]`` and, for every symbol
``s``, the continuation bit ``phi(y, s) = 1[exists z: y s z in L]`` (``y s`` is *live*).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DFA", "tomita", "parity", "dyck", "LANGUAGES", "SUITE", "TOMITA", "DYCK", "get_language", "language_info",
    "nsp_labels", "sample_words", "sample_untruncated", "distinguishing_word", "equivalent", "difference_words",
    "flip_acceptance",
]


def _word(word) -> tuple:
    return tuple(word)


@dataclass
class DFA:
    """Complete DFA ``(Sigma, Q, delta, q0, F)``: ``delta[q, i]`` is the successor of state ``q`` on
    ``alphabet[i]``, ``accept[q]`` marks ``F``; ``start`` is ``q0``."""

    alphabet: tuple
    delta: np.ndarray
    accept: np.ndarray
    start: int = 0

    def __post_init__(self):
        self.alphabet = tuple(self.alphabet)
        self.delta = np.asarray(self.delta, dtype=np.int64).reshape(-1, len(self.alphabet))
        self.accept = np.asarray(self.accept, dtype=bool).reshape(-1)
        self.start = int(self.start)
        n = len(self.accept)
        if self.delta.shape[0] != n or (self.delta < 0).any() or (self.delta >= n).any():
            raise ValueError("delta must be an (n_states, |alphabet|) table of state indices")
        if not 0 <= self.start < n:
            raise ValueError("start state out of range")
        self._sym = {a: i for i, a in enumerate(self.alphabet)}
        self._live = None
        self._dist = None
        self._suffix = None

    # ------------------------------------------------------------------------------------ basics
    @property
    def n_states(self) -> int:
        return int(len(self.accept))

    def sym(self, a) -> int:
        return self._sym[a]

    def step(self, q: int, a) -> int:
        return int(self.delta[q, self._sym[a]])

    def run(self, word, q: int | None = None) -> int:
        """State reached from ``q`` (default ``q0``) after reading ``word``."""
        q = self.start if q is None else int(q)
        for a in word:
            q = int(self.delta[q, self._sym[a]])
        return q

    def trace(self, word) -> list:
        """States after each prefix: ``[q0, delta(q0, w1), ..., delta*(q0, w)]`` (length ``|w| + 1``)."""
        q = self.start
        out = [q]
        for a in word:
            q = int(self.delta[q, self._sym[a]])
            out.append(q)
        return out

    def accepts(self, word) -> bool:
        return bool(self.accept[self.run(word)])

    # ------------------------------------------------------------------------------- live / dead
    def dist_to_accept(self) -> np.ndarray:
        """Length of the shortest accepted suffix from each state (``-1``: dead state), reverse BFS."""
        if self._dist is None:
            n = self.n_states
            preds = [[] for _ in range(n)]
            for q in range(n):
                for t in self.delta[q]:
                    preds[int(t)].append(q)
            dist = np.full(n, -1, dtype=np.int64)
            dq = deque()
            for q in np.flatnonzero(self.accept):
                dist[q] = 0
                dq.append(int(q))
            while dq:
                q = dq.popleft()
                for p in preds[q]:
                    if dist[p] < 0:
                        dist[p] = dist[q] + 1
                        dq.append(p)
            self._dist = dist
        return self._dist

    def live(self) -> np.ndarray:
        """``live[q]`` iff some accepting state is reachable from ``q`` (co-reachability)."""
        if self._live is None:
            self._live = self.dist_to_accept() >= 0
        return self._live

    def accepting_suffix(self, q: int):
        """A shortest word ``s`` with ``delta*(q, s)`` accepting (tuple), ``None`` for a dead ``q``."""
        dist = self.dist_to_accept()
        q = int(q)
        if dist[q] < 0:
            return None
        out = []
        while dist[q] > 0:
            for i, a in enumerate(self.alphabet):
                t = int(self.delta[q, i])
                if dist[t] == dist[q] - 1:
                    out.append(a)
                    q = t
                    break
        return tuple(out)

    def continuation(self, q: int) -> np.ndarray:
        """Continuation bits of a state: ``phi(q, s) = live[delta(q, s)]`` for every symbol (bool ``(k,)``)."""
        return self.live()[self.delta[int(q)]]

    # --------------------------------------------------------------------------------- minimise
    def reachable(self) -> np.ndarray:
        seen = np.zeros(self.n_states, dtype=bool)
        seen[self.start] = True
        dq = deque([self.start])
        while dq:
            q = dq.popleft()
            for t in self.delta[q]:
                if not seen[t]:
                    seen[t] = True
                    dq.append(int(t))
        return seen

    def canonical(self) -> "DFA":
        """Reachable part renumbered in BFS order from ``q0`` (symbols in alphabet order); two minimal DFAs of
        the same language have identical canonical forms."""
        order = {self.start: 0}
        dq = deque([self.start])
        while dq:
            q = dq.popleft()
            for t in self.delta[q]:
                t = int(t)
                if t not in order:
                    order[t] = len(order)
                    dq.append(t)
        old = sorted(order, key=order.get)
        delta = np.array([[order[int(t)] for t in self.delta[q]] for q in old], dtype=np.int64)
        return DFA(self.alphabet, delta, self.accept[old], 0)

    def minimize(self) -> "DFA":
        """Minimal complete DFA of ``L(self)`` (Moore partition refinement on the reachable part), canonical."""
        d = self.canonical()
        block = d.accept.astype(np.int64)
        n_blocks = len(np.unique(block))
        while True:
            sig = np.concatenate([block[:, None], block[d.delta]], axis=1)
            _, new = np.unique(sig, axis=0, return_inverse=True)
            new = new.reshape(-1)
            k = int(new.max()) + 1
            block = new
            if k == n_blocks:
                break
            n_blocks = k
        delta = np.zeros((n_blocks, len(d.alphabet)), dtype=np.int64)
        accept = np.zeros(n_blocks, dtype=bool)
        for q in range(d.n_states):
            delta[block[q]] = block[d.delta[q]]
            accept[block[q]] = d.accept[q]
        return DFA(d.alphabet, delta, accept, int(block[d.start])).canonical()

    # ------------------------------------------------------------------------------ conversions
    def to_dict(self) -> dict:
        """Plain JSON-able form: ``{"alphabet", "delta", "accept", "start"}`` (lists)."""
        return {"alphabet": list(self.alphabet), "delta": self.delta.tolist(),
                "accept": [bool(x) for x in self.accept], "start": self.start}

    @staticmethod
    def from_dict(d: dict) -> "DFA":
        return DFA(tuple(d["alphabet"]), d["delta"], d["accept"], d.get("start", 0))

    def to_aalpy(self):
        """The same automaton as an ``aalpy.automata.Dfa`` (state ids ``"q<i>"``)."""
        from aalpy.automata import Dfa, DfaState

        states = [DfaState(f"q{q}", bool(self.accept[q])) for q in range(self.n_states)]
        for q, st in enumerate(states):
            for i, a in enumerate(self.alphabet):
                st.transitions[a] = states[int(self.delta[q, i])]
        return Dfa(states[self.start], states)

    @staticmethod
    def from_aalpy(aut, alphabet) -> "DFA":
        """Convert an ``aalpy`` ``Dfa`` (input-complete over ``alphabet``)."""
        idx = {id(s): i for i, s in enumerate(aut.states)}
        delta = [[idx[id(s.transitions[a])] for a in alphabet] for s in aut.states]
        accept = [bool(s.is_accepting) for s in aut.states]
        return DFA(tuple(alphabet), delta, accept, idx[id(aut.initial_state)])


# ------------------------------------------------------------------------------------ the languages
def _from_fn(alphabet, start, accept_fn, step_fn) -> DFA:
    """Build the reachable DFA of a transition function on hashable states, then minimise it."""
    ids = {start: 0}
    order = [start]
    rows = []
    i = 0
    while i < len(order):
        s = order[i]
        row = []
        for a in alphabet:
            t = step_fn(s, a)
            if t not in ids:
                ids[t] = len(order)
                order.append(t)
            row.append(ids[t])
        rows.append(row)
        i += 1
    return DFA(tuple(alphabet), rows, [accept_fn(s) for s in order], 0).minimize()


DEAD = "dead"


def tomita(i: int) -> DFA:
    """Minimal DFA of Tomita grammar ``i`` over {0, 1} (Tomita 1982):
    1: ``1*``; 2: ``(10)*``; 3: no odd-length run of 1s immediately followed by an odd-length run of 0s
    (a trailing odd run of 0s counts); 4: no ``000``; 5: even #0 and even #1; 6: ``#0 - #1 = 0 (mod 3)``;
    7: ``0*1*0*1*``. Minimal sizes (with the dead state): 2, 3, 5, 4, 4, 3, 5."""
    A = ("0", "1")
    if i == 1:
        return _from_fn(A, "ok", lambda s: s == "ok", lambda s, a: s if a == "1" else DEAD)
    if i == 2:
        return _from_fn(A, 0, lambda s: s == 0,
                        lambda s, a: DEAD if s == DEAD else (1 if (s == 0 and a == "1") else
                                                             (0 if (s == 1 and a == "0") else DEAD)))
    if i == 3:
        # states: "A" neutral, "B" inside an odd run of 1s, "D" odd 1-run then odd 0-run, "E" odd 1-run then even 0-run
        tr = {("A", "0"): "A", ("A", "1"): "B", ("B", "0"): "D", ("B", "1"): "A",
              ("D", "0"): "E", ("D", "1"): DEAD, ("E", "0"): "D", ("E", "1"): "B"}
        return _from_fn(A, "A", lambda s: s in ("A", "B", "E"),
                        lambda s, a: DEAD if s == DEAD else tr[(s, a)])
    if i == 4:
        return _from_fn(A, 0, lambda s: s != DEAD,
                        lambda s, a: DEAD if s == DEAD else (0 if a == "1" else (s + 1 if s < 2 else DEAD)))
    if i == 5:
        return _from_fn(A, (0, 0), lambda s: s == (0, 0),
                        lambda s, a: ((s[0] + 1) % 2, s[1]) if a == "0" else (s[0], (s[1] + 1) % 2))
    if i == 6:
        return _from_fn(A, 0, lambda s: s == 0, lambda s, a: (s + (1 if a == "0" else -1)) % 3)
    if i == 7:
        # phase 0: 0*, 1: 0*1*, 2: 0*1*0*, 3: 0*1*0*1*; a symbol that needs a 5th block -> dead
        def st(s, a):
            if s == DEAD:
                return DEAD
            want = "0" if s % 2 == 0 else "1"
            if a == want:
                return s
            return s + 1 if s < 3 else DEAD
        return _from_fn(A, 0, lambda s: s != DEAD, st)
    raise ValueError(f"Tomita grammars are numbered 1..7, got {i}")


def parity() -> DFA:
    """Parity over {0, 1}: words with an even number of 1s (2 states)."""
    return _from_fn(("0", "1"), 0, lambda s: s == 0, lambda s, a: (s + (a == "1")) % 2)


BRACKETS = (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"))


def dyck(k: int, m: int) -> DFA:
    """Bounded Dyck-(k, m): balanced words over ``k`` bracket types with nesting depth ``<= m``; alphabet
    ``( ) [ ] { } < >`` (first ``k`` pairs). States = stacks of depth ``<= m`` plus a dead state:
    ``sum_{d<=m} k^d + 1`` (8, 16, 41, 86 for (2,2), (2,3), (3,3), (4,3))."""
    if not 1 <= k <= len(BRACKETS) or m < 1:
        raise ValueError("need 1 <= k <= 4 and m >= 1")
    pairs = BRACKETS[:k]
    alphabet = tuple(c for p in pairs for c in p)
    opens = {p[0]: j for j, p in enumerate(pairs)}
    closes = {p[1]: j for j, p in enumerate(pairs)}

    def st(s, a):
        if s == DEAD:
            return DEAD
        if a in opens:
            return s + (opens[a],) if len(s) < m else DEAD
        return s[:-1] if (s and s[-1] == closes[a]) else DEAD

    return _from_fn(alphabet, (), lambda s: s == (), st)


TOMITA = tuple(f"tomita{i}" for i in range(1, 8))
DYCK = ("dyck2_2", "dyck2_3", "dyck3_3", "dyck4_3")
SUITE = ("tomita2", "tomita3", "tomita4", "tomita5", "tomita6", "tomita7", "parity") + DYCK
"""The paper's 11 languages (6 Tomita grammars 2-7, Parity, 4 bounded Dyck languages; spec 5.3)."""

# sampler defaults per language (spec: stop 0.15 at accepting states, length <= 30, Dyck <= 24). For Dyck the
# uniform walk with stop 0.15 has mean length 34-240 (>45 % of walks longer than 24), so the Dyck sampler stops
# with 0.4 and, at non-accepting states, takes a closing move with extra probability 0.5 (deviation, see report).
_TOMITA_SAMPLER = {"stop_prob": 0.15, "max_len": 30, "close_bias": 0.0}
_DYCK_SAMPLER = {"stop_prob": 0.4, "max_len": 24, "close_bias": 0.5}

LANGUAGES = {
    **{f"tomita{i}": {"build": (lambda i=i: tomita(i)), "family": "tomita", "sampler": _TOMITA_SAMPLER}
       for i in range(1, 8)},
    "parity": {"build": parity, "family": "parity", "sampler": _TOMITA_SAMPLER},
    **{f"dyck{k}_{m}": {"build": (lambda k=k, m=m: dyck(k, m)), "family": "dyck", "sampler": _DYCK_SAMPLER}
       for k, m in ((2, 2), (2, 3), (3, 3), (4, 3))},
}
EXPECTED_STATES = {"tomita1": 2, "tomita2": 3, "tomita3": 5, "tomita4": 4, "tomita5": 4, "tomita6": 3, "tomita7": 5,
                   "parity": 2, "dyck2_2": 8, "dyck2_3": 16, "dyck3_3": 41, "dyck4_3": 86}


def get_language(name: str) -> DFA:
    """Exact minimal DFA of a language of ``LANGUAGES`` (e.g. ``"tomita3"``, ``"parity"``, ``"dyck2_2"``)."""
    if name not in LANGUAGES:
        raise KeyError(f"unknown language {name!r}; known: {sorted(LANGUAGES)}")
    return LANGUAGES[name]["build"]()


def language_info(name: str) -> dict:
    """``{"name", "family", "n_states", "alphabet", "sampler": {stop_prob, max_len, close_bias}, "dfa": to_dict}``."""
    d = get_language(name)
    return {"name": name, "family": LANGUAGES[name]["family"], "n_states": d.n_states,
            "alphabet": list(d.alphabet), "sampler": dict(LANGUAGES[name]["sampler"]), "dfa": d.to_dict()}


def flip_acceptance(dfa: DFA, state: int) -> DFA:
    """``dfa`` with the acceptance of one state flipped (controls of C1 and C5: a perturbed language). In a minimal
    DFA every state is reachable and distinguishable, so the language always changes (the state's access words
    change membership)."""
    accept = dfa.accept.copy()
    accept[int(state)] = not accept[int(state)]
    return DFA(dfa.alphabet, dfa.delta.copy(), accept, dfa.start)


# ------------------------------------------------------------------------------------ NSP labelling
def nsp_labels(dfa: DFA, word) -> tuple:
    """NSP labels of every prefix ``y = w[:i]``, ``i = 0..|w|``: ``(member, cont)`` with ``member[i] = 1[y in L]``
    (bool ``(|w|+1,)``) and ``cont[i, j] = phi(y, alphabet[j]) = 1[exists z: y a_j z in L]`` (bool ``(|w|+1, k)``)."""
    states = np.asarray(dfa.trace(_word(word)), dtype=np.int64)
    return dfa.accept[states].copy(), dfa.live()[dfa.delta[states]]


# ------------------------------------------------------------------------------------------ sampler
def _walk_tables(dfa: DFA):
    live = dfa.live()
    dist = dfa.dist_to_accept()
    opts, closer = [], []
    for q in range(dfa.n_states):
        succ = dfa.delta[q]
        opts.append(np.flatnonzero(live[succ]))
        closer.append(np.flatnonzero(live[succ] & (dist[succ] < dist[q])) if dist[q] > 0 else np.zeros(0, int))
    return opts, closer


def sample_words(dfa: DFA, n: int, rng, stop_prob: float = 0.15, max_len: int = 30, close_bias: float = 0.0,
                 start_state: int | None = None, max_tries: int = 1000) -> list:
    """``n`` positive words from a random walk on the live states: at an accepting state stop with probability
    ``stop_prob``; otherwise, with probability ``close_bias`` take a symbol that moves strictly closer to
    acceptance (if one exists; never at accepting states), else a uniformly random live symbol. Walks longer
    than ``max_len`` are rejected and redrawn (conditioning on ``|w| <= max_len``, no forced moves).
    ``start_state`` (default ``q0``) must be live: the walk then samples accepting continuations of any prefix
    leading to it (the exact-teacher ``Gen``). ``rng``: a ``numpy.random.Generator`` or a seed."""
    rng = np.random.default_rng(rng)
    q0 = dfa.start if start_state is None else int(start_state)
    if not dfa.live()[q0]:
        raise ValueError("no accepting word from this state")
    opts, closer = _walk_tables(dfa)
    out = []
    for _ in range(int(n)):
        for _try in range(max_tries):
            q, w = q0, []
            while len(w) <= max_len:
                if dfa.accept[q] and (len(opts[q]) == 0 or rng.random() < stop_prob):
                    break
                if len(closer[q]) and close_bias > 0 and rng.random() < close_bias:
                    j = int(closer[q][rng.integers(len(closer[q]))])
                else:
                    j = int(opts[q][rng.integers(len(opts[q]))])
                w.append(dfa.alphabet[j])
                q = int(dfa.delta[q, j])
            if len(w) <= max_len:
                out.append(tuple(w))
                break
        else:
            raise RuntimeError(f"no word of length <= {max_len} after {max_tries} tries")
    return out


def sample_untruncated(dfa: DFA, n: int, rng, noise: float = 0.05, stop_prob: float = 0.15, max_len: int = 30,
                       close_bias: float = 0.0) -> list:
    """Stand-in for an *untruncated* LM over a DFA (classic-L* baseline with an exact teacher): the walk of
    ``sample_words``, but before every move, with probability ``noise`` (always once the walk is dead) a uniform
    choice among ``Sigma + {EOS}``; words stop at ``max_len``. Mostly positive for small ``noise``; every word
    of length ``<= max_len`` has positive probability."""
    rng = np.random.default_rng(rng)
    opts, closer = _walk_tables(dfa)
    live = dfa.live()
    k = len(dfa.alphabet)
    out = []
    for _ in range(int(n)):
        q, w = dfa.start, []
        while len(w) < max_len:
            if not live[q] or rng.random() < noise:
                j = int(rng.integers(k + 1))
                if j == k:
                    break
            elif dfa.accept[q] and (len(opts[q]) == 0 or rng.random() < stop_prob):
                break
            elif len(closer[q]) and close_bias > 0 and rng.random() < close_bias:
                j = int(closer[q][rng.integers(len(closer[q]))])
            else:
                j = int(opts[q][rng.integers(len(opts[q]))])
            w.append(dfa.alphabet[j])
            q = int(dfa.delta[q, j])
        out.append(tuple(w))
    return out


# ------------------------------------------------------------------------------------- comparisons
def _product_bfs(a: DFA, b: DFA):
    if tuple(a.alphabet) != tuple(b.alphabet):
        raise ValueError("alphabets differ")
    start = (a.start, b.start)
    parent = {start: None}
    dq = deque([start])
    while dq:
        p = dq.popleft()
        if a.accept[p[0]] != b.accept[p[1]]:
            w = []
            while parent[p] is not None:
                p, sym = parent[p]
                w.append(sym)
            return tuple(reversed(w))
        for i, s in enumerate(a.alphabet):
            t = (int(a.delta[p[0], i]), int(b.delta[p[1], i]))
            if t not in parent:
                parent[t] = (p, s)
                dq.append(t)
    return None


def distinguishing_word(a: DFA, b: DFA):
    """A shortest word in ``L(a) xor L(b)`` (BFS on the product DFA), ``None`` if the languages are equal."""
    return _product_bfs(a, b)


def equivalent(a: DFA, b: DFA) -> bool:
    """``L(a) == L(b)`` (product BFS)."""
    return _product_bfs(a, b) is None


def difference_words(a: DFA, b: DFA, k: int = 20, max_len: int = 60) -> list:
    """The ``k`` shortest words (length-lexicographic, symbols in alphabet order) of ``L(a) xor L(b)`` with
    length ``<= max_len`` (spec "error mining": BFS on the product DFA of ``L(A_hat) xor L(A*)``). Output-sensitive:
    ``exact[r][p]`` = a difference state is reachable from product state ``p`` in exactly ``r`` steps."""
    if tuple(a.alphabet) != tuple(b.alphabet):
        raise ValueError("alphabets differ")
    n_b = b.n_states
    pa = np.repeat(np.arange(a.n_states), n_b)
    pb = np.tile(np.arange(n_b), a.n_states)
    succ = a.delta[pa] * n_b + b.delta[pb]  # (n_a*n_b, k)
    good = a.accept[pa] != b.accept[pb]
    exact = [good]
    for _ in range(max_len):
        exact.append(exact[-1][succ].any(axis=1))
    start = a.start * n_b + b.start
    out = []

    def enum(p, r, prefix):
        if len(out) >= k:
            return
        if r == 0:
            out.append(tuple(prefix))
            return
        for i, s in enumerate(a.alphabet):
            t = int(succ[p, i])
            if exact[r - 1][t]:
                prefix.append(s)
                enum(t, r - 1, prefix)
                prefix.pop()
                if len(out) >= k:
                    return

    for length in range(max_len + 1):
        if exact[length][start]:
            enum(start, length, [])
        if len(out) >= k:
            break
    return out
