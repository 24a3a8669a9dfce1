"""Core algorithms for the ``lnsp`` reproduction ("Automata Learning and Identification of the Support of
Language Models", ICLR 2026; spec ``shared/papers/lnsp.md``). No official code was found; everything here is
written from the spec. Pure functions, no file I/O, no printing, deterministic given the seeds; run torch (the
Transformer teachers) with one thread (``torch.set_num_threads(1)``).

API (claim served in brackets; C1..C5 = spec 5.4)
--------------------------------------------------
Languages (``languages.py``) [C1-C5 targets]
  ``DFA(alphabet, delta, accept, start)`` -- ``.accepts(w)``, ``.run``, ``.trace``, ``.live()``, ``.minimize()``,
  ``.canonical()``, ``.to_dict()`` / ``DFA.from_dict(d)``, ``.to_aalpy()`` / ``DFA.from_aalpy(aut, alphabet)``;
  ``tomita(i)``, ``parity()``, ``dyck(k, m)``, ``get_language(name)``, ``language_info(name) -> dict``;
  ``SUITE`` (the paper's 11), ``TOMITA``, ``DYCK``, ``EXPECTED_STATES``, ``LANGUAGES[name]["sampler"]``;
  ``nsp_labels(dfa, w) -> (member (n+1,), cont (n+1, k))`` [claim 1: the NSP labelling];
  ``sample_words(dfa, n, rng, stop_prob, max_len, close_bias)``, ``sample_untruncated(dfa, n, rng, noise, ...)``;
  ``distinguishing_word(a, b)``, ``equivalent(a, b)``, ``difference_words(a, b, k)`` [C1-C3, C5].
Teachers and oracles (``oracles.py``) [claim 2, C1-C5]
  ``DFATeacher(dfa, **sampler)`` (exact NSP teacher); ``ShuffledNSPTeacher`` (continuation bits permuted: C4's
  control); ``NSPEquivalenceOracle`` (PAC EQ with NSP labels, Lemma 5.1 counterexamples); ``BinarySamplingOracle``
  (PAC EQ with binary labels); ``pac_sample_size(i, eps, delta)``.
L*_nsp and baselines (``lstar_nsp.py``) [claim 2, C1-C5]
  ``lstar(teacher, eq_oracle)`` (own L*, RS processing);
  ``lstar_nsp(teacher, eps, delta, seed, backend="own"|"aalpy", max_rounds, max_states, max_mq) -> dict``
  [C1, C2, C3]; ``classic_lstar(teacher, sampler, ...)`` (the same L* and budget, binary labels) [C4];
  ``rpni_baseline(teacher, words)`` (aalpy ``run_RPNI``; optional baseline).
Scores (``scores.py``)
  ``compare_dfa(learned, target)``, ``nsp_accuracy(teacher, target, words)``, ``mine_errors(...)`` [C2, C3, C5].
Transformer teachers (``transformer.py``, and ``teachers.py`` for the pipeline: the only modules that need torch)
  [C2, C3, C5]
  ``train_transformer(words, alphabet, ...) -> (model, info)`` (``model.state_dict()`` is tensors only);
  ``build_model(config, state_dict)``; ``TransformerTeacher(model, p_min=0.05, gen_max_len=60)`` (min-p support,
  MQ / NSP labels / Gen / untruncated samples, prefix-memoised); ``teachers.PROFILES``;
  ``teachers.train_teacher(name, seed, profile)`` -> ``(state_dict, config, info)``;
  ``teachers.load_teacher(config, state_dict)``.
Pipeline helpers (this module; numpy only, so the exact-teacher runs never load torch)
  ``word_to_str`` / ``str_to_word``; ``nsp_example(dfa, w) -> dict``; ``make_corpus(name, n, seed)``;
  ``budget(target_states, ...)`` (the query budget every learner gets); ``exact_teacher(name, kind, seed)``
  (exact, or the controls "shuffled" / "perturbed"); ``run_exact(name, seed, ...)`` [C1];
  ``run_classic(teacher, target, seed, ...)`` [C4]; ``mutant_mining(teacher, name, seed)`` [C5's control];
  ``teacher_metrics(teacher, name, seed)`` [C2/C3 gate]; ``extract(teacher, name, seed, ...)`` [C2, C3, C5];
  ``compare_with_aalpy(languages, seed)`` (bench/reference_libraries.py: L*_nsp beside aalpy's classic L*).
"""

from __future__ import annotations

import numpy as np

from .languages import (DFA, DYCK, EXPECTED_STATES, LANGUAGES, SUITE, TOMITA, difference_words, distinguishing_word,
                        dyck, equivalent, flip_acceptance, get_language, language_info, nsp_labels, parity,
                        sample_untruncated, sample_words, tomita)
from .lstar_nsp import classic_lstar, lstar, lstar_nsp, rpni_baseline, untruncated_dfa_sampler
from .oracles import (BinarySamplingOracle, DFATeacher, NSPEquivalenceOracle, ShuffledNSPTeacher, Teacher,
                      pac_sample_size)
from .scores import compare_dfa, mine_errors, nsp_accuracy

__all__ = [
    "DFA", "tomita", "parity", "dyck", "get_language", "language_info", "SUITE", "TOMITA", "DYCK", "LANGUAGES",
    "EXPECTED_STATES", "nsp_labels", "sample_words", "sample_untruncated", "distinguishing_word", "equivalent",
    "difference_words", "flip_acceptance",
    "Teacher", "DFATeacher", "ShuffledNSPTeacher", "NSPEquivalenceOracle", "BinarySamplingOracle", "pac_sample_size", "lstar",
    "lstar_nsp", "classic_lstar", "rpni_baseline", "untruncated_dfa_sampler", "compare_dfa", "nsp_accuracy",
    "mine_errors",
    "word_to_str", "str_to_word", "nsp_example", "make_corpus", "budget", "learner_settings", "perturbed_target",
    "exact_teacher", "run_exact", "run_classic", "teacher_metrics", "extract", "mutant_mining", "compare_with_aalpy",
]

def word_to_str(word) -> str:
    """Words of single-character symbols as plain strings (file format)."""
    return "".join(word)


def str_to_word(s: str) -> tuple:
    return tuple(s)


def nsp_example(dfa: DFA, word) -> dict:
    """One NSP-labelled example in plain form: ``{"word": str, "member": "0101..." (one bit per prefix, |w|+1),
    "cont": ["11", "10", ...] (per prefix, one bit per symbol in alphabet order)}``."""
    mem, cont = nsp_labels(dfa, word)
    return {"word": word_to_str(word), "member": "".join("1" if b else "0" for b in mem),
            "cont": ["".join("1" if b else "0" for b in row) for row in cont]}


def _sampler(name: str, max_len: int | None = None) -> dict:
    s = dict(LANGUAGES[name]["sampler"])
    if max_len is not None:
        s["max_len"] = int(max_len)
    return s


def make_corpus(name: str, n: int, seed: int, max_len: int | None = None) -> list:
    """``n`` positive words of language ``name`` (its sampler; ``max_len`` overrides the length cap)."""
    return sample_words(get_language(name), n, np.random.default_rng(seed), **_sampler(name, max_len))


def budget(target_states: int, rounds: int = 300, states_factor: int = 2, states_extra: int = 10,
           mq: int = 500_000) -> dict:
    """The query budget of every L* learner (L*_nsp, classic L*, the controls; exact and Transformer teachers):
    ``max_rounds`` EQ rounds (round i draws ``m_i`` samples, so the sample budget is ``sum_{i <= rounds} m_i``),
    ``max_states = states_factor * target + states_extra`` hypothesis states (a noisy support can be
    non-regular) and ``max_mq`` distinct membership queries. A learner that runs out is not ``converged``."""
    return {"max_rounds": int(rounds), "max_states": int(states_factor * target_states + states_extra),
            "max_mq": int(mq)}


def learner_settings(name: str, p: dict) -> dict:
    """The keyword arguments every learner of language ``name`` gets from params ``lnsp.learners`` (``run_exact``,
    ``run_classic``): PAC ``eps`` and ``delta``, the L* ``backend`` and the shared query budget ``caps``."""
    caps = budget(EXPECTED_STATES[name], p["rounds"], p["states_factor"], p["states_extra"], p["mq"])
    return {"eps": p["eps"], "delta": p["delta"], "backend": p["backend"], "caps": caps}


def perturbed_target(name: str, seed: int = 0) -> tuple:
    """``(DFA, state)``: the target of ``name`` with one seeded *rejecting* state made accepting (controls of C1
    and C5): a strictly larger language (the state's access words join it), never empty, so an NSP teacher of it
    can still sample positive words."""
    target = get_language(name)
    rejecting = np.flatnonzero(~target.accept)
    state = int(rejecting[np.random.default_rng([int(seed), 0xF11B]).integers(len(rejecting))])
    return flip_acceptance(target, state), state


def exact_teacher(name: str, kind: str = "exact", seed: int = 0) -> Teacher:
    """The exact NSP teacher of ``name`` (``kind="exact"``), or a control built on it: ``"shuffled"`` (continuation
    bits permuted, ``ShuffledNSPTeacher``; C4) or ``"perturbed"`` (the exact teacher of ``perturbed_target``; C1)."""
    if kind == "perturbed":
        return DFATeacher(perturbed_target(name, seed)[0], **_sampler(name))
    teacher = DFATeacher(get_language(name), **_sampler(name))
    if kind == "shuffled":
        return ShuffledNSPTeacher(teacher, seed)
    if kind != "exact":
        raise ValueError(f"unknown teacher kind {kind!r}")
    return teacher


def run_exact(name: str, seed: int = 0, eps: float = 0.01, delta: float = 0.05, backend: str = "own",
              caps: dict | None = None, teacher: Teacher | None = None) -> dict:
    """L*_nsp with the exact DFA teacher of ``name`` (or ``teacher``, e.g. a control of ``exact_teacher``) within
    ``caps`` (default ``budget(target states)``) [C1, C4]: ``lstar_nsp`` keys + ``compare_dfa`` keys against the
    target of ``name`` (``equivalent``, ``same_size``, ``target_states``, ``distinguishing_word``) + ``"language"``."""
    target = get_language(name)
    teacher = DFATeacher(target, **_sampler(name)) if teacher is None else teacher
    res = lstar_nsp(teacher, eps=eps, delta=delta, seed=seed, backend=backend, **(caps or budget(target.n_states)))
    cmp = compare_dfa(res["dfa"], target)
    return {"language": name, **res, **{k: v for k, v in cmp.items() if k != "n_states"}}


def run_classic(teacher: Teacher, name: str, seed: int = 0, eps: float = 0.01, delta: float = 0.05,
                noise: float = 0.05, caps: dict | None = None, backend: str = "own") -> dict:
    """Classic L* (binary labels; the same L* and budget ``caps`` as L*_nsp, default ``budget(target states)``)
    [C4]. With a ``TransformerTeacher`` the EQ samples come from the untruncated LM; with a ``DFATeacher`` from
    ``sample_untruncated`` (uniform noise ``noise``). Returns the ``classic_lstar`` keys + ``compare_dfa`` keys +
    ``"language"``."""
    target = get_language(name)
    if hasattr(teacher, "sample_untruncated"):  # a Transformer teacher samples its own untruncated LM
        sampler = teacher.sample_untruncated
    else:
        sampler = untruncated_dfa_sampler(target, noise, **_sampler(name))
    res = classic_lstar(teacher, sampler, eps=eps, delta=delta, seed=seed, backend=backend,
                        **(caps or budget(target.n_states)))
    cmp = compare_dfa(res["dfa"], target)
    return {"language": name, **res, **{k: v for k, v in cmp.items() if k != "n_states"}}


def teacher_metrics(teacher: Teacher, name: str, seed: int = 0, n: int = 1000) -> dict:
    """NSP accuracy of a teacher against the target [C2/C3 gate]: on ``n`` fresh held-out words of the language's
    sampler (``heldout_*``) and on ``n`` fresh teacher samples (``own_*``, spec "NSP accuracy on 1000 fresh teacher
    samples"). Keys ``heldout_string_acc``, ``heldout_label_acc``, ``heldout_member_acc``, ``own_string_acc``,
    ``own_label_acc``, ``own_member_acc``, ``own_mean_len``."""
    target = get_language(name)
    held = make_corpus(name, n, 10_000 + seed, max_len=60)
    own = teacher.sample(n, np.random.default_rng(20_000 + seed))
    a = nsp_accuracy(teacher, target, held)
    b = nsp_accuracy(teacher, target, own)
    out = {f"heldout_{k}": v for k, v in a.items() if k != "n"}
    out.update({f"own_{k}": v for k, v in b.items() if k != "n"})
    out["own_mean_len"] = float(np.mean([len(w) for w in own])) if own else 0.0
    return out


def extract(teacher: Teacher, name: str, seed: int = 0, eps: float = 0.01, delta: float = 0.05,
            caps: dict | None = None, n_mined: int = 20) -> dict:
    """Extraction with a (Transformer) teacher [C2, C3, C5]: ``lstar_nsp`` keys + ``compare_dfa`` keys +
    ``"mined"`` (``mine_errors``: shortest ``n_mined`` words of ``L(extracted) xor L(target)``, ``confirmed``
    teacher errors, ``frac_confirmed``) + ``"language"``. ``caps`` (default ``budget(target states)``) bound L*
    on noisy supports (``converged`` false then; the MQ cost of a blow-up grows with the state cap)."""
    target = get_language(name)
    res = lstar_nsp(teacher, eps=eps, delta=delta, seed=seed, **(caps or budget(target.n_states)))
    cmp = compare_dfa(res["dfa"], target)
    mined = mine_errors(res["dfa"], target, teacher, k=n_mined)
    return {"language": name, **res, **{k: v for k, v in cmp.items() if k != "n_states"}, "mined": mined}


def shuffled_extraction(teacher: Teacher, name: str, seed: int = 0, eps: float = 0.01, delta: float = 0.05,
                        caps: dict | None = None) -> dict:
    """Placebo of C2: ``extract``'s L*_nsp on the same (Transformer) teacher with only its continuation bits made
    inert (``ShuffledNSPTeacher``: permuted within each sampled word; membership bits, MQs and generative queries the
    teacher's own), the same PAC parameters and budget: ``lstar_nsp`` keys + ``compare_dfa`` keys (no mining)."""
    target = get_language(name)
    res = lstar_nsp(ShuffledNSPTeacher(teacher, seed), eps=eps, delta=delta, seed=seed,
                    **(caps or budget(target.n_states)))
    cmp = compare_dfa(res["dfa"], target)
    return {"language": name, **res, **{k: v for k, v in cmp.items() if k != "n_states"}}


def mutant_mining(teacher: Teacher, name: str, seed: int = 0, n_mined: int = 20) -> dict:
    """Control of C5: the error mining of a DFA that was *not* extracted from the teacher, ``perturbed_target``
    (the target with one seeded state's acceptance flipped): ``compare_dfa`` keys against the target,
    ``"flipped_state"`` and ``"mined"`` (as in ``extract``). If its difference words were teacher errors as often
    as the extraction's, the confirmation rate would say nothing about the extraction."""
    target = get_language(name)
    mutant, state = perturbed_target(name, seed)
    cmp = compare_dfa(mutant, target)
    return {**cmp, "flipped_state": state, "mined": mine_errors(mutant, target, teacher, k=n_mined)}


def compare_with_aalpy(languages=None, seed: int = 0) -> list:
    """L*_nsp (own L*, NSP labels + generative queries) and classic L* (binary labels) on our L* beside classic L*
    on aalpy's ``run_Lstar`` (the reference library), all with the exact DFA teacher of each language (default:
    the paper's 11) and the same budget. One dict per language: ``{language, nsp_mq, nsp_seconds, classic_mq,
    classic_seconds, aalpy_mq, aalpy_seconds, nsp_exact, classic_exact, aalpy_exact}`` (``*_exact``: converged to
    a DFA equivalent to the target with its minimal number of states; aalpy's MQs count every prefix it steps)."""
    def exact(r):
        return bool(r["converged"] and r["equivalent"] and r["same_size"])

    rows = []
    for name in (SUITE if languages is None else languages):
        nsp = run_exact(name, seed)
        teacher = DFATeacher(get_language(name), **_sampler(name))
        own, ref = (run_classic(teacher, name, seed, backend=b) for b in ("own", "aalpy"))
        rows.append({"language": name, **{f"{k}_mq": int(r["n_mq"]) for k, r in (("nsp", nsp), ("classic", own), ("aalpy", ref))},
                     **{f"{k}_seconds": round(float(r["time_s"]), 4) for k, r in (("nsp", nsp), ("classic", own), ("aalpy", ref))},
                     **{f"{k}_exact": exact(r) for k, r in (("nsp", nsp), ("classic", own), ("aalpy", ref))}})
    return rows
