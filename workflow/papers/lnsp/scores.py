"""The scores of a learned automaton against its target and its teacher: ``compare_dfa`` (size, equivalence, a
distinguishing word), ``nsp_accuracy`` (NSP labels on held-out words), ``mine_errors`` (C5: the teacher's own errors
found as the words where the learned automaton and the target differ).
"""

from __future__ import annotations

import numpy as np

from .languages import DFA, difference_words, distinguishing_word, nsp_labels
from .oracles import Teacher


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
