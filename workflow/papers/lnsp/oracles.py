"""What L*_nsp and its baselines ask (paper Sec. 5, Lemma 5.1): the teachers (the exact NSP teacher ``DFATeacher``
and C4's control ``ShuffledNSPTeacher``, whose continuation bits are shuffled; the Transformer teacher is
``transformer.TransformerTeacher``) and the PAC equivalence oracles (``NSPEquivalenceOracle`` with NSP labels,
``BinarySamplingOracle`` with binary labels for classic L*, ``pac_sample_size``).

Teacher protocol (``Teacher``): ``alphabet``; ``membership(words) -> bool array`` (MQ, batched);
``nsp_batch(words) -> [(member (n+1,), cont (n+1, k))]`` (the teacher's NSP labels of every prefix);
``generate(prefix, rng) -> tuple | None`` (the generative query ``Gen(x)``: a continuation ``y`` with ``x y`` in the
teacher's language, ``None`` if none was produced); ``sample(n, rng)`` (``n`` draws of ``Gen(empty)``, the sampling
distribution of the PAC guarantee). Counters: ``n_mq`` (distinct words asked), ``n_gen`` (Gen calls, incl. samples).
"""

from __future__ import annotations

import math

import numpy as np

from .languages import DFA, nsp_labels, sample_words


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
