"""The learners (paper Sec. 5, Thm. 5.2): L*_nsp (our L* with RS counterexample processing, or aalpy's run_Lstar, on
the PAC NSP equivalence oracle), the baselines (classic L* with binary labels on the same L* and query budget;
passive RPNI via aalpy), and the aalpy adapters. The teachers and oracles they ask are in ``oracles``, the scores
of a learned automaton in ``scores``.
"""

from __future__ import annotations

import time

import numpy as np

from .languages import DFA, sample_untruncated
from .oracles import BinarySamplingOracle, NSPEquivalenceOracle, Teacher


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
