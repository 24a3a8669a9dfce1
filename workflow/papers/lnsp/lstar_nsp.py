"""L*_nsp (paper Sec. 5, Lemma 5.1, Thm. 5.2), the exact NSP teacher, the PAC NSP equivalence oracle, the baselines
(classic L* with binary labels on the same L* and query budget, our L* or aalpy's run_Lstar; passive RPNI via aalpy)
and C4's control (an NSP teacher whose continuation bits are shuffled).

Teacher protocol (``Teacher``): ``alphabet``; ``membership(words) -> bool array`` (MQ, batched);
``nsp_batch(words) -> [(member (n+1,), cont (n+1, k))]`` (the teacher's NSP labels of every prefix);
``generate(prefix, rng) -> tuple | None`` (the generative query ``Gen(x)``: a continuation ``y`` with ``x y`` in the
teacher's language, ``None`` if none was produced); ``sample(n, rng)`` (``n`` draws of ``Gen(empty)``, the sampling
distribution of the PAC guarantee). Counters: ``n_mq`` (distinct words asked), ``n_gen`` (Gen calls, incl. samples).
"""

from __future__ import annotations

import math
import time

import numpy as np

from .languages import DFA, difference_words, distinguishing_word, nsp_labels, sample_untruncated, sample_words

__all__ = [
    "Teacher", "DFATeacher", "pac_sample_size", "NSPEquivalenceOracle", "lstar", "lstar_nsp", "classic_lstar",
    "rpni_baseline", "compare_dfa", "nsp_accuracy", "mine_errors", "hypothesis_nsp_labels", "BinarySamplingOracle",
    "untruncated_dfa_sampler", "BudgetExceeded", "ShuffledNSPTeacher",
]


# ------------------------------------------------------------------------------------------ teachers
class Teacher:
    """Base class: caches MQ answers per word and counts distinct MQs (``n_mq``) and Gen calls (``n_gen``)."""

    alphabet: tuple = ()

    def __init__(self):
        self._mq = {}
        self.n_mq = 0
        self.n_gen = 0

    def reset_counts(self):
        """Zero the counters and forget which words were asked (the answers of an LM stay memoised inside)."""
        self._mq = {}
        self.n_mq = 0
        self.n_gen = 0

    # subclasses implement the uncached oracles
    def _membership(self, words: list) -> np.ndarray:
        raise NotImplementedError

    def nsp_batch(self, words: list) -> list:
        raise NotImplementedError

    def generate(self, prefix, rng):
        raise NotImplementedError

    def sample(self, n: int, rng) -> list:
        raise NotImplementedError

    def membership(self, words) -> np.ndarray:
        """``MQ(w)`` for every word (bool array), memoised; ``n_mq`` counts distinct words."""
        words = [tuple(w) for w in words]
        todo = list(dict.fromkeys(w for w in words if w not in self._mq))
        if todo:
            ans = self._membership(todo)
            for w, a in zip(todo, ans):
                self._mq[w] = bool(a)
            self.n_mq += len(todo)
        return np.array([self._mq[w] for w in words], dtype=bool)

    def nsp(self, word) -> tuple:
        return self.nsp_batch([tuple(word)])[0]


class DFATeacher(Teacher):
    """Exact NSP teacher of a DFA ``A*``: ``MQ(w) = 1[w in L(A*)]``; NSP labels from ``A*`` (``nsp_labels``);
    ``Gen(x)`` = random walk from ``delta*(q0, x)`` (``sample_words`` with the language's sampler settings;
    ``None`` if ``x`` is dead)."""

    def __init__(self, dfa: DFA, stop_prob: float = 0.15, max_len: int = 30, close_bias: float = 0.0):
        super().__init__()
        self.dfa = dfa
        self.alphabet = tuple(dfa.alphabet)
        self.walk = {"stop_prob": stop_prob, "max_len": max_len, "close_bias": close_bias}

    def _membership(self, words):
        return np.array([self.dfa.accepts(w) for w in words], dtype=bool)

    def nsp_batch(self, words):
        return [nsp_labels(self.dfa, w) for w in words]

    def generate(self, prefix, rng):
        self.n_gen += 1
        q = self.dfa.run(prefix)
        if not self.dfa.live()[q]:
            return None
        return sample_words(self.dfa, 1, rng, start_state=q, **self.walk)[0]

    def sample(self, n, rng):
        self.n_gen += int(n)
        return sample_words(self.dfa, n, rng, **self.walk)


class ShuffledNSPTeacher(Teacher):
    """Control of C4: an NSP teacher whose continuation bits carry no information. Membership queries, samples
    and generative queries are the wrapped teacher's; in the NSP labels of each sampled word the membership bits
    are kept and the continuation bits are permuted uniformly over all (prefix, symbol) positions of that word
    (the same number of live bits, none tied to its prefix or symbol). Seeded: the same run gives the same bits."""

    def __init__(self, teacher: Teacher, seed: int = 0):
        super().__init__()
        self.inner = teacher
        self.alphabet = tuple(teacher.alphabet)
        self.rng = np.random.default_rng([int(seed), 0x5EED])

    def reset_counts(self):
        super().reset_counts()
        self.inner.reset_counts()

    def _membership(self, words):
        return self.inner.membership(words)

    def nsp_batch(self, words):
        out = []
        for mem, cont in self.inner.nsp_batch(words):
            out.append((mem, self.rng.permutation(cont.ravel()).reshape(cont.shape)))
        return out

    def generate(self, prefix, rng):
        self.n_gen += 1
        return self.inner.generate(prefix, rng)

    def sample(self, n, rng):
        self.n_gen += int(n)
        return self.inner.sample(n, rng)


# ------------------------------------------------------------------------------- PAC NSP equivalence
def pac_sample_size(i: int, eps: float = 0.01, delta: float = 0.05) -> int:
    """Samples of EQ round ``i`` (1-based): ``m_i = ceil((1/eps) (ln(1/delta) + i ln 2))`` (Angluin's PAC
    conversion; a hypothesis that passes is eps-close w.p. >= 1 - delta over all rounds)."""
    return int(math.ceil((math.log(1.0 / delta) + i * math.log(2.0)) / eps))


def hypothesis_nsp_labels(hyp: DFA, word) -> tuple:
    """NSP labels of the hypothesis (membership of the state; continuation = ``delta(q, s)`` co-reachable to an
    accepting state, from the reverse BFS of ``DFA.live``) -- identical to ``nsp_labels``."""
    return nsp_labels(hyp, word)


class _PACOracle:
    """What the two PAC equivalence oracles share: the teacher, the (eps, delta) sample schedule drawn in chunks
    from a seeded generator, the pool of earlier samples re-checked first (``reuse``), and the round bookkeeping."""

    def __init__(self, teacher: Teacher, eps: float, delta: float, rng, chunk: int, max_rounds: int | None,
                 reuse: bool):
        self.teacher = teacher
        self.reuse = bool(reuse)
        self.pool = []
        self.eps, self.delta = float(eps), float(delta)
        self.rng = np.random.default_rng(rng)
        self.chunk = int(chunk)
        self.max_rounds = max_rounds
        self.rounds = self.n_samples = self.samples_to_last_cex = 0
        self.hyp_sizes = []
        self.exhausted = False

    def _begin_round(self, hyp: DFA) -> bool:
        """False once `max_rounds` are spent; else counts the round and records the hypothesis size."""
        if self.max_rounds is not None and self.rounds >= self.max_rounds:
            self.exhausted = True
            return False
        self.rounds += 1
        self.hyp_sizes.append(hyp.n_states)
        return True


class NSPEquivalenceOracle(_PACOracle):
    """PAC equivalence query with NSP labels (spec 5.3 / Lemma 5.1). Round ``i`` draws ``m_i`` samples from the
    teacher (``Gen(empty)``); for each sample and each prefix ``y = x[:n]`` it compares the hypothesis' NSP labels
    with the teacher's. The first mismatch becomes a *membership* counterexample:

    * membership bits differ            -> ``x[:n]``;
    * teacher: ``s`` dead, hypothesis live -> ``x[:n] s u``, ``u`` a shortest accepting suffix in the hypothesis;
    * teacher: ``s`` live, hypothesis dead -> ``x[:n] s y``, ``y ~ Gen(x[:n] s)``.

    A candidate is kept only if ``MQ(cex) != hyp(cex)`` (otherwise the scan goes on). With ``reuse=True`` the
    samples drawn in earlier rounds (and their teacher labels) are re-checked first, at no sample cost, before the
    round's ``m_i`` fresh samples are drawn (so one sample can yield several counterexamples: "1 positive sample
    suffices"); the PAC argument only needs the fresh samples of the final round. Call it with a ``DFA``
    hypothesis; returns the counterexample (tuple) or ``None``. Records ``rounds``, ``n_samples`` (drawn in all),
    ``samples_to_last_cex`` (samples drawn up to and including the one that gave the last counterexample),
    ``hyp_sizes`` and ``cex_kinds`` ("member", "dead", "live")."""

    def __init__(self, teacher: Teacher, eps: float = 0.01, delta: float = 0.05, rng=0, chunk: int = 32,
                 max_rounds: int | None = None, reuse: bool = True):
        super().__init__(teacher, eps, delta, rng, chunk, max_rounds, reuse)
        self.cex_kinds = []

    def _check(self, hyp: DFA, word, labels):
        mem_t, cont_t = labels
        mem_h, cont_h = nsp_labels(hyp, word)
        n_pos = min(len(mem_t), len(mem_h))
        states = hyp.trace(word)
        for n in range(n_pos):
            cands = []
            if mem_t[n] != mem_h[n]:
                cands.append(("member", tuple(word[:n])))
            for j in np.flatnonzero(cont_t[n] != cont_h[n]):
                a = hyp.alphabet[int(j)]
                if cont_h[n, j]:  # teacher: dead, hypothesis: live
                    cands.append(("dead", tuple(word[:n]) + (a,) + hyp.accepting_suffix(hyp.step(states[n], a))))
                else:  # teacher: live, hypothesis: dead
                    y = self.teacher.generate(tuple(word[:n]) + (a,), self.rng)
                    if y is not None:
                        cands.append(("live", tuple(word[:n]) + (a,) + tuple(y)))
            for kind, cex in cands:
                if bool(self.teacher.membership([cex])[0]) != hyp.accepts(cex):
                    return kind, cex
        return None

    def __call__(self, hyp: DFA):
        if not self._begin_round(hyp):
            return None
        for w, lab in self.pool:
            found = self._check(hyp, w, lab)
            if found is not None:
                self.cex_kinds.append(found[0])
                return found[1]
        m = pac_sample_size(self.rounds, self.eps, self.delta)
        drawn = 0
        while drawn < m:
            words = self.teacher.sample(min(self.chunk, m - drawn), self.rng)
            labels = self.teacher.nsp_batch(words)
            for w, lab in zip(words, labels):
                drawn += 1
                self.n_samples += 1
                if self.reuse:
                    self.pool.append((w, lab))
                found = self._check(hyp, w, lab)
                if found is not None:
                    self.samples_to_last_cex = self.n_samples
                    self.cex_kinds.append(found[0])
                    return found[1]
        return None


# ---------------------------------------------------------------------------------------- own L*
class _Table:
    """Angluin observation table ``(S, E, T)`` with batched MQs; ``S`` prefix-closed, rows of ``S`` distinct."""

    def __init__(self, teacher: Teacher):
        self.t = teacher
        self.A = tuple(teacher.alphabet)
        self.S = [()]
        self.E = [()]
        self.rows = {}

    def fill(self, prefixes=None):
        words = list(self.rows) if prefixes is None else prefixes
        need = []
        for p in words:
            r = self.rows.setdefault(p, [])
            need.extend(p + e for e in self.E[len(r):])
        ans = dict(zip(need, self.t.membership(need))) if need else {}
        for p in words:
            r = self.rows[p]
            r.extend(ans[p + e] for e in self.E[len(r):])

    def add_prefixes(self, prefixes):
        new = [p for p in prefixes if p not in self.rows]
        for p in new:
            self.rows[p] = []
        self.fill(new)

    def row(self, p):
        return tuple(self.rows[p])

    def close(self, max_states):
        while True:
            self.add_prefixes([s + (a,) for s in self.S for a in self.A])
            srows = {self.row(s) for s in self.S}
            new = []
            for s in sorted(self.S, key=len):
                for a in self.A:
                    r = self.row(s + (a,))
                    if r not in srows:
                        srows.add(r)
                        new.append(s + (a,))
            if not new:
                return True
            self.S.extend(new)
            if len(self.S) > max_states:
                return False

    def hypothesis(self):
        idx = {}
        for s in self.S:
            idx.setdefault(self.row(s), len(idx))
        access = [None] * len(idx)
        for s in self.S:
            if access[idx[self.row(s)]] is None:
                access[idx[self.row(s)]] = s
        delta = [[idx[self.row(access[q] + (a,))] for a in self.A] for q in range(len(idx))]
        accept = [self.rows[access[q]][0] for q in range(len(idx))]
        return DFA(self.A, delta, accept, idx[self.row(())]), access

    def add_cex(self, hyp: DFA, access, cex):
        """Rivest-Schapire: binary search for ``i`` with ``alpha(i) != alpha(i+1)``,
        ``alpha(i) = MQ(access(delta*(q0, w[:i])) w[i:])``; add the suffix ``w[i+1:]`` to ``E``."""
        states = hyp.trace(cex)

        def alpha(i):
            return bool(self.t.membership([access[states[i]] + tuple(cex[i:])])[0])

        lo, hi = 0, len(cex)
        a_lo = alpha(lo)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if alpha(mid) == a_lo:
                lo = mid
            else:
                hi = mid
        suffixes = [tuple(cex[hi:])]
        if suffixes[0] in self.E:  # cannot happen with a consistent teacher; fall back to all suffixes
            suffixes = [tuple(cex[i:]) for i in range(len(cex) + 1)]
        added = [e for e in dict.fromkeys(suffixes) if e not in self.E]
        self.E.extend(added)
        self.fill()
        return len(added)


def lstar(teacher: Teacher, eq_oracle, max_rounds: int = 50, max_states: int = 2000,
          max_mq: int | None = None) -> dict:
    """Angluin's L* (closedness + Rivest-Schapire counterexample processing, so rows of ``S`` stay distinct and
    no consistency check is needed) with membership queries to ``teacher`` and the equivalence oracle
    ``eq_oracle(hyp: DFA) -> cex | None``. A counterexample is re-used until the hypothesis classifies it right.
    Returns ``{"dfa": DFA, "rounds", "converged", "hyp_sizes", "n_cex", "S_size", "E_size"}`` (``converged``:
    the last equivalence query returned ``None`` within the budget: ``max_rounds`` EQs, ``max_states`` hypothesis
    states and, checked before each EQ, ``max_mq`` distinct MQs)."""
    tab = _Table(teacher)
    tab.fill([()])
    rounds = 0
    n_cex = 0
    hyp_sizes = []
    cex = None
    hyp = None
    converged = False
    while True:
        if not tab.close(max_states):
            break
        hyp, access = tab.hypothesis()
        if cex is not None and bool(teacher.membership([cex])[0]) != hyp.accepts(cex):
            if tab.add_cex(hyp, access, cex):  # the old counterexample still works: no new EQ needed
                continue
        if rounds >= max_rounds or (max_mq is not None and teacher.n_mq > max_mq):
            break
        rounds += 1
        hyp_sizes.append(hyp.n_states)
        cex = eq_oracle(hyp)
        if cex is None:
            converged = not getattr(eq_oracle, "exhausted", False)
            break
        cex = tuple(cex)
        n_cex += 1
        tab.add_cex(hyp, access, cex)
    if hyp is None:  # state cap hit before the first hypothesis: the one-state automaton of MQ(empty)
        hyp = DFA(tab.A, [[0] * len(tab.A)], [tab.rows[()][0]], 0)
    return {"dfa": hyp, "rounds": rounds, "converged": converged, "hyp_sizes": hyp_sizes, "n_cex": n_cex,
            "S_size": len(tab.S), "E_size": len(tab.E)}


# ------------------------------------------------------------------------------------- aalpy adapters
class BudgetExceeded(RuntimeError):
    """Raised inside an aalpy run when the MQ budget is spent (aalpy has no state cap of its own)."""


def _aalpy_sul(teacher: Teacher, max_mq: int | None = None):
    from aalpy.base import SUL

    class TeacherSUL(SUL):
        """``step`` returns ``MQ`` of the prefix read so far (``step(None)``: the empty word)."""

        def __init__(self):
            super().__init__()
            self.prefix = []

        def pre(self):
            self.prefix = []

        def post(self):
            pass

        def step(self, letter):
            if letter is not None:
                self.prefix.append(letter)
            return bool(teacher.membership([tuple(self.prefix)])[0])

        def query(self, word):
            """Same outputs as stepping through ``word``, but all prefixes in one batched teacher call."""
            if max_mq is not None and teacher.n_mq > max_mq:
                raise BudgetExceeded(f"more than {max_mq} membership queries")
            self.num_queries += 1
            self.num_steps += len(word)
            word = tuple(word)
            if not word:
                return [bool(teacher.membership([()])[0])]
            return [bool(x) for x in teacher.membership([word[:i + 1] for i in range(len(word))])]

    return TeacherSUL()


def _aalpy_oracle(alphabet, sul, check, max_states: int | None = None):
    """aalpy ``Oracle`` around ``check(hyp: DFA) -> cex | None``; keeps the last hypothesis in ``.last`` and
    raises ``BudgetExceeded`` once a hypothesis has more than ``max_states`` states."""
    from aalpy.base import Oracle

    class Wrapped(Oracle):
        last = None

        def find_cex(self, hypothesis):
            if not hypothesis.is_input_complete():
                hypothesis.make_input_complete("sink_state")
            hyp = DFA.from_aalpy(hypothesis, alphabet)
            self.last = hyp
            if max_states is not None and hyp.n_states > max_states:
                raise BudgetExceeded(f"hypothesis with more than {max_states} states")
            cex = check(hyp)
            return None if cex is None else tuple(cex)

    return Wrapped(list(alphabet), sul)


def _run_aalpy_lstar(teacher: Teacher, oracle, max_rounds: int, max_states: int | None, max_mq: int | None):
    """``run_Lstar`` (dfa, RS) with budgets; returns ``(DFA, stopped_by_budget)``."""
    from aalpy.learning_algs import run_Lstar

    sul = _aalpy_sul(teacher, max_mq)
    eq = _aalpy_oracle(teacher.alphabet, sul, oracle, max_states)
    try:
        aut = run_Lstar(list(teacher.alphabet), sul, eq, automaton_type="dfa", cex_processing="rs",
                        max_learning_rounds=max_rounds + 1, return_data=False, print_level=0)
    except BudgetExceeded:
        last = eq.last if eq.last is not None else DFA(teacher.alphabet, [[0] * len(teacher.alphabet)],
                                                       [bool(teacher.membership([()])[0])], 0)
        return last, True
    return DFA.from_aalpy(aut, teacher.alphabet), False


class BinarySamplingOracle(_PACOracle):
    """Classic PAC equivalence query with binary labels (baseline (i)): round ``i`` draws ``m_i`` words from
    ``sampler(n, rng)`` (the *untruncated* LM, or ``sample_untruncated`` for a DFA teacher), labels each by
    ``MQ``; the first word the hypothesis classifies differently is the counterexample. Same bookkeeping as
    ``NSPEquivalenceOracle`` plus ``n_negative`` (sampled words labelled 0); ``reuse`` re-checks earlier samples
    first, as there."""

    def __init__(self, teacher: Teacher, sampler, eps=0.01, delta=0.05, rng=0, chunk=64, max_rounds=None,
                 reuse: bool = True):
        super().__init__(teacher, eps, delta, rng, chunk, max_rounds, reuse)
        self.sampler = sampler
        self.n_negative = 0

    def __call__(self, hyp: DFA):
        if not self._begin_round(hyp):
            return None
        for w, lab in self.pool:
            if lab != hyp.accepts(w):
                return w
        m = pac_sample_size(self.rounds, self.eps, self.delta)
        drawn = 0
        while drawn < m:
            words = self.sampler(min(self.chunk, m - drawn), self.rng)
            labels = self.teacher.membership(words)
            for w, lab in zip(words, labels):
                drawn += 1
                self.n_samples += 1
                self.n_negative += int(not lab)
                if self.reuse:
                    self.pool.append((tuple(w), bool(lab)))
                if bool(lab) != hyp.accepts(w):
                    self.samples_to_last_cex = self.n_samples
                    return tuple(w)
        return None


def _result(dfa: DFA, oracle, teacher: Teacher, t0: float, converged: bool, rounds: int, extra=None) -> dict:
    out = {"dfa": dfa.minimize().to_dict(), "n_states": int(dfa.minimize().n_states), "rounds": int(rounds),
           "converged": bool(converged), "n_mq": int(teacher.n_mq), "n_gen": int(teacher.n_gen),
           "n_samples": int(oracle.n_samples), "samples_to_last_cex": int(oracle.samples_to_last_cex),
           "hyp_sizes": [int(x) for x in oracle.hyp_sizes], "time_s": float(time.perf_counter() - t0)}
    out.update(extra or {})
    return out


def _run_lstar(teacher: Teacher, oracle, backend: str, max_rounds: int, max_states: int, max_mq: int | None):
    """One L* run on ``oracle`` within the budget, by either implementation: ``(DFA, converged, rounds)``."""
    if backend == "own":
        res = lstar(teacher, oracle, max_rounds=max_rounds, max_states=max_states, max_mq=max_mq)
        return res["dfa"], res["converged"], res["rounds"]
    if backend == "aalpy":
        dfa, stopped = _run_aalpy_lstar(teacher, oracle, max_rounds, max_states, max_mq)
        return dfa, not stopped and not oracle.exhausted and oracle.rounds <= max_rounds, oracle.rounds
    raise ValueError("backend must be 'own' or 'aalpy'")


def lstar_nsp(teacher: Teacher, eps: float = 0.01, delta: float = 0.05, seed: int = 0, max_rounds: int = 300,
              max_states: int = 2000, backend: str = "own", chunk: int = 32, reuse: bool = True,
              max_mq: int | None = 500_000) -> dict:
    """L*_nsp = L* with membership queries + the NSP PAC equivalence oracle fed by generative queries
    (``NSPEquivalenceOracle``, counterexamples per Lemma 5.1). ``backend="own"`` uses this module's L*
    (batched MQs), ``"aalpy"`` runs ``aalpy.run_Lstar(..., automaton_type="dfa", cex_processing="rs")`` with a
    ``TeacherSUL`` and the same oracle. The teacher's counters are reset first.

    Returns ``{"dfa": DFA.to_dict() (minimised), "n_states", "rounds" (EQs asked), "converged", "n_mq" (distinct
    MQs incl. counterexample checks), "n_gen" (Gen calls incl. samples), "n_samples" (EQ samples drawn),
    "samples_to_last_cex", "hyp_sizes" (per EQ round), "cex_kinds", "time_s"}``. ``converged`` is false when the
    budget (``max_rounds`` EQs, ``max_states`` hypothesis states, ``max_mq`` distinct MQs) ran out first."""
    teacher.reset_counts()
    t0 = time.perf_counter()
    oracle = NSPEquivalenceOracle(teacher, eps, delta, rng=seed, chunk=chunk, max_rounds=max_rounds, reuse=reuse)
    dfa, conv, rounds = _run_lstar(teacher, oracle, backend, max_rounds, max_states, max_mq)
    return _result(dfa, oracle, teacher, t0, conv, rounds, {"cex_kinds": list(oracle.cex_kinds)})


def classic_lstar(teacher: Teacher, sampler, eps: float = 0.01, delta: float = 0.05, seed: int = 0,
                  max_rounds: int = 300, chunk: int = 64, reuse: bool = True, max_states: int = 2000,
                  max_mq: int | None = 500_000, backend: str = "own") -> dict:
    """Baseline (i): classic L* with binary labels only: the same L* as ``lstar_nsp`` (``backend``: this module's,
    or ``aalpy.run_Lstar(automaton_type="dfa", cex_processing="rs")`` with a ``TeacherSUL``) and the same budget
    (``max_rounds`` EQs, ``max_states`` hypothesis states, ``max_mq`` distinct MQs), with a
    ``BinarySamplingOracle`` over ``sampler(n, rng)`` (same ``m_i``) in place of the NSP oracle. ``converged`` is
    false when the budget ran out (the last hypothesis is returned). Returns the keys of ``lstar_nsp`` (without
    ``cex_kinds``) plus ``"frac_negative"`` (share of sampled words labelled 0)."""
    teacher.reset_counts()
    t0 = time.perf_counter()
    oracle = BinarySamplingOracle(teacher, sampler, eps, delta, rng=seed, chunk=chunk, max_rounds=max_rounds,
                                  reuse=reuse)
    dfa, conv, rounds = _run_lstar(teacher, oracle, backend, max_rounds, max_states, max_mq)
    return _result(dfa, oracle, teacher, t0, conv, rounds,
                   {"frac_negative": float(oracle.n_negative / max(oracle.n_samples, 1))})


def untruncated_dfa_sampler(dfa: DFA, noise: float = 0.05, **walk):
    """``sampler(n, rng)`` for ``classic_lstar`` with an exact teacher (``sample_untruncated``)."""
    return lambda n, rng: sample_untruncated(dfa, n, rng, noise=noise, **walk)


def rpni_baseline(teacher: Teacher, words) -> dict:
    """Baseline (iii): passive RPNI (``aalpy.learning_algs.run_RPNI``, ``algorithm="gsm"``, sink-state completion)
    on the positive words plus the negatives their NSP labels imply (prefixes with membership 0, and ``y s`` for
    every dead continuation bit). Returns ``{"dfa", "n_states", "n_pos", "n_neg", "time_s"}``."""
    from aalpy.learning_algs import run_RPNI

    t0 = time.perf_counter()
    words = [tuple(w) for w in words]
    labelled = {}
    for w, (mem, cont) in zip(words, teacher.nsp_batch(words)):
        for n in range(len(w) + 1):
            labelled[w[:n]] = bool(mem[n])
            for j in np.flatnonzero(~cont[n]):
                labelled.setdefault(w[:n] + (teacher.alphabet[int(j)],), False)
    data = [(w, lab) for w, lab in labelled.items()]
    aut = run_RPNI(data, automaton_type="dfa", algorithm="gsm", input_completeness="sink_state",
                   print_info=False)
    dfa = DFA.from_aalpy(aut, teacher.alphabet).minimize()
    return {"dfa": dfa.to_dict(), "n_states": dfa.n_states, "n_pos": int(sum(v for v in labelled.values())),
            "n_neg": int(sum(not v for v in labelled.values())), "time_s": float(time.perf_counter() - t0)}


# ----------------------------------------------------------------------------------------- evaluation
def _as_dfa(d) -> DFA:
    return d if isinstance(d, DFA) else DFA.from_dict(d)


def compare_dfa(learned, target) -> dict:
    """``{"n_states" (minimal learned), "target_states" (minimal target), "equivalent" (product BFS),
    "same_size", "distinguishing_word" (shortest word of the symmetric difference, as a string, or None)}``."""
    a, b = _as_dfa(learned).minimize(), _as_dfa(target).minimize()
    w = distinguishing_word(a, b)
    return {"n_states": a.n_states, "target_states": b.n_states, "equivalent": w is None,
            "same_size": a.n_states == b.n_states, "distinguishing_word": None if w is None else "".join(w)}


def nsp_accuracy(teacher: Teacher, target, words) -> dict:
    """NSP accuracy of a teacher against the target DFA on ``words``: ``string_acc`` = share of words whose every
    prefix label (membership and all continuation bits) is right; ``label_acc`` = share of right labels;
    ``member_acc`` = share of words with the right ``MQ``."""
    tgt = _as_dfa(target)
    words = [tuple(w) for w in words]
    ok_str = ok_lab = n_lab = ok_mem = 0
    for w, (mem, cont) in zip(words, teacher.nsp_batch(words)):
        m2, c2 = nsp_labels(tgt, w)
        right = np.concatenate([(mem == m2)[:, None], cont == c2], axis=1)
        ok_str += bool(right.all())
        ok_lab += int(right.sum())
        n_lab += right.size
    mq = teacher.membership(words)
    ok_mem = int(sum(bool(a) == tgt.accepts(w) for a, w in zip(mq, words)))
    n = max(len(words), 1)
    return {"string_acc": ok_str / n, "label_acc": ok_lab / max(n_lab, 1), "member_acc": ok_mem / n,
            "n": len(words)}


def mine_errors(learned, target, teacher: Teacher, k: int = 20, max_len: int = 60) -> dict:
    """Error mining (claim 5): the ``k`` shortest words of ``L(learned) xor L(target)`` (product BFS) and whether
    each is a *confirmed teacher error* (``MQ_teacher(w) != target(w)``). Returns ``{"words": [str], "confirmed":
    [bool], "frac_confirmed" (nan if no word)}``."""
    a, b = _as_dfa(learned), _as_dfa(target)
    words = difference_words(a, b, k=k, max_len=max_len)
    mq = teacher.membership(words) if words else np.zeros(0, bool)
    conf = [bool(m) != b.accepts(w) for m, w in zip(mq, words)]
    return {"words": ["".join(w) for w in words], "confirmed": conf,
            "frac_confirmed": float(np.mean(conf)) if conf else float("nan")}
