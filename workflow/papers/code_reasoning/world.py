"""The program world of the miniature: seeded latent programs, their renderings, and the three evaluation tasks.

A latent program P runs params.yaml data.statements (3-4) statements over 2-4 single-digit variables (mod 10):
  set a c | a = b +- c | a = b + c | if a > c: b = b +- k else: b = b -+ k | repeat r: a = a + k
and asks for one variable. From P come, all rule-based (the paper's GPT-4o-mini rewrites replaced by templates):
  * an English instruction (shared by every variant: the corpus is fully parallel);
  * a response in one of the VARIANTS (code, its structural and semantic perturbations, abstractions, a denser
    rendering), then its solution: the worked steps (each operation with its operands' values and its result, a
    scratchpad shared by every variant; data.worked_steps) and "ANSWER: v". No rendering lists intermediate values;
    the worked steps after it do, as a reasoning model's answer does (issue 34: without them no model this size
    learnt to execute 3-statement programs, PAPER.md Calibration);
  * three evaluation items: a word problem of another template family (math), a clean program to run (code
    understanding), and an English comparison/condition question sharing the if/else logic (NL reasoning).
Everything is a pure function of (seed, index); no torch here.
"""
from __future__ import annotations

import hashlib
import re

import numpy as np

NAMES = "abcd"
PEOPLE = {"a": "Tom", "b": "Ann", "c": "Sam", "d": "Liz"}
PROMPT_LEN = 128        # characters; every prompt is right-padded to it (fields at fixed offsets)
RESPONSE_LEN = 256      # characters of a response (rendering, worked steps, "ANSWER: v"), then <eos>; 99 % of 3-4
                        # statement programs fit (measured), the others are redrawn
ALPHABET = "".join(chr(i) for i in range(32, 127)) + "\n"

# ---- programs -----------------------------------------------------------------------------------------------


def assigned(s: tuple) -> str:
    """The variable a statement writes."""
    return s[3] if s[0] == "ifelse" else s[2] if s[0] == "repeat" else s[1]


def draw_program(rng: np.random.Generator, statements: tuple[int, int] = (3, 4)) -> dict:
    """{"vars", "stmts", "target"}; every variable is defined before it is read; the target is the last one written.
    `statements`: the smallest and largest number of statements (params.yaml data.statements, a calibration knob)."""
    names = list(NAMES[:int(rng.integers(2, 5))])
    stmts, defined = [], []

    def pick(options):
        return str(rng.choice(options))

    for _ in range(int(rng.integers(statements[0], statements[1] + 1))):
        fresh = [v for v in names if v not in defined]
        pairs = ["add"] if len(defined) >= 2 else []
        if not defined or (fresh and rng.random() < 0.5):  # define a new variable
            x, kind = fresh[0], "set" if not defined else pick(["set", "addc"] + pairs)
        else:                                              # update a defined one
            x, kind = pick(defined), pick(["addc", "ifelse", "repeat"] + pairs)
        if kind == "set":
            stmts.append(("set", x, int(rng.integers(0, 10))))
        elif kind == "addc":
            stmts.append(("addc", x, pick(defined), pick(["+", "-"]), int(rng.integers(1, 10))))
        elif kind == "add":
            y, z = rng.choice(defined, size=2, replace=False)
            stmts.append(("add", x, str(y), str(z)))
        elif kind == "ifelse":
            stmts.append(("ifelse", pick(defined), int(rng.integers(1, 9)), x, pick(["+", "-"]), int(rng.integers(1, 10))))
        else:
            stmts.append(("repeat", int(rng.integers(2, 4)), x, int(rng.integers(1, 10))))
        if x not in defined:
            defined.append(x)
    return {"vars": names, "stmts": stmts, "target": assigned(stmts[-1])}


def execute(program: dict) -> list[tuple[str | None, int | None, str]]:
    """The reference interpreter (mod 10), one entry per step: (variable written, its value, the worked step), a
    loop's every pass; an if's condition is a step of its own that writes nothing (None, None, "b>6=8>6=yes")."""
    env: dict[str, int] = {}
    steps: list[tuple[str | None, int | None, str]] = []

    def write(x: str, shown: str, value: int) -> None:
        env[x] = value % 10
        steps.append((x, env[x], f"{x}={shown}={env[x]}" if shown else f"{x}={env[x]}"))

    def apply(x: str, y: str, sign: str, k: int) -> None:  # x = y +- k, worked as "x=y+k=7+k=v"
        write(x, f"{y}{sign}{k}={env[y]}{sign}{k}", env[y] + (k if sign == "+" else -k))

    for s in program["stmts"]:
        if s[0] == "set":
            write(s[1], "", s[2])
        elif s[0] == "addc":
            apply(*s[1:])
        elif s[0] == "add":
            _, x, y, z = s
            write(x, f"{y}+{z}={env[y]}+{env[z]}", env[y] + env[z])
        elif s[0] == "ifelse":
            _, cond, c, y, sign, k = s
            yes = env[cond] > c
            steps.append((None, None, f"{cond}>{c}={env[cond]}>{c}={'yes' if yes else 'no'}"))
            apply(y, y, sign if yes else ("-" if sign == "+" else "+"), k)
        else:
            _, r, x, k = s
            for _ in range(r):
                apply(x, x, "+", k)
    return steps


def run(program: dict) -> int:
    """The program's answer: the target's last value."""
    return [v for x, v, _ in execute(program) if x == program["target"]][-1]


def worked(program: dict) -> str:
    """The worked steps, a scratchpad: each step restated, its operands' values put in and its value, e.g.
    "a=7 b=a-9=7-9=8 b>6=8>6=yes c=c-1=5-1=4 ..." (a loop's every pass): one operation of single digits each."""
    return " ".join(shown for _, _, shown in execute(program))


def trace(program: dict) -> str:
    """The execution trace, e.g. "a=3 b=7 b=0": the value of every write (the probe T1's answers)."""
    return " ".join(f"{x}={v}" for x, v, _ in execute(program) if x is not None)


def key(program: dict) -> str:
    """A program's identity (train, priming and evaluation sets never share one)."""
    return hashlib.sha1(repr((program["stmts"], program["target"])).encode()).hexdigest()[:16]


# ---- the instruction (English, shared by every variant) -------------------------------------------------------

def sign_word(sign: str) -> str:
    return "plus" if sign == "+" else "minus"


def instruction(p: dict) -> str:
    parts = []
    for s in p["stmts"]:
        if s[0] == "set":
            parts.append(f"Set {s[1]} to {s[2]}.")
        elif s[0] == "addc":
            parts.append(f"{s[1]} is {s[2]} {sign_word(s[3])} {s[4]}.")
        elif s[0] == "add":
            parts.append(f"{s[1]} is {s[2]} plus {s[3]}.")
        elif s[0] == "ifelse":
            _, cond, c, y, sign, k = s
            more, less = ("add", "take") if sign == "+" else ("take", "add")
            parts.append(f"If {cond}>{c} {more} {k} to {y}, else {less} {k}.")
        else:
            parts.append(f"{s[1]} times add {s[3]} to {s[2]}.")
    return " ".join(parts) + f" Mod 10. What is {p['target']}?"


# ---- renderings ----------------------------------------------------------------------------------------------

def py_lines(p: dict, comments: list[str] | None = None) -> list[tuple[str, str]]:
    """(code, comment) per line of the Python rendering; comments describe each step without its value."""
    out = []
    for s in p["stmts"]:
        if s[0] == "set":
            out.append((f"{s[1]} = {s[2]}", f"set {s[1]}"))
        elif s[0] == "addc":
            out.append((f"{s[1]} = ({s[2]}{s[3]}{s[4]}) % 10", f"{'add' if s[3] == '+' else 'subtract'} {s[4]}"))
        elif s[0] == "add":
            out.append((f"{s[1]} = ({s[2]}+{s[3]}) % 10", "sum"))
        elif s[0] == "ifelse":
            _, cond, c, y, sign, k = s
            other = "-" if sign == "+" else "+"
            out += [(f"if {cond} > {c}:", f"check {cond}"), (f"  {y} = ({y}{sign}{k}) % 10", ""),
                    ("else:", ""), (f"  {y} = ({y}{other}{k}) % 10", "")]
        else:
            _, r, x, k = s
            out += [(f"for _ in range({r}):", f"repeat {r}"), (f"  {x} = ({x}+{k}) % 10", "")]
    out.append((f"print({p['target']})", ""))
    if comments is not None:
        it = iter(comments)
        out = [(code, next(it, "") if note else "") for code, note in out]
    return out


def join_py(lines: list[tuple[str, str]]) -> str:
    return "\n".join(f"{code}  # {note}" if note else code for code, note in lines)


def py(p: dict) -> str:
    return join_py(py_lines(p))


def misleading(note: str, rng: np.random.Generator) -> str:
    """A comment with a wrong number or direction (the paper's misleading comments)."""
    swapped = {"add": "subtract", "subtract": "add"}
    words = [swapped.get(w, w) for w in note.split()]
    return re.sub(r"\d", lambda m: str((int(m.group()) + int(rng.integers(1, 9))) % 10), " ".join(words))


KEYWORDS = ["if", "else", "for", "in", "range", "print", "=", "+", "-", "%", ">", ":"]
POOL = ["zq", "vx", "kj", "wq", "qz", "jx", "xv", "yq", "qk", "zv", "vj", "kx", "xq", "jz", "qv",
        "wz", "zk", "vq", "kq", "xj", "jq", "qw", "zx", "vk", "kv", "xz", "jv", "qj", "wx", "zj"]  # 30 tokens
FICTIONAL = dict(zip(KEYWORDS, ["ifo", "elo", "foro", "ino", "rango", "showo", "<-", "&", "~", "@", "}", ";"]))
KEYWORD_RE = re.compile(r"\b(if|else|for|in|range|print)\b|[=+\-%>:]")


def rekey(code: str, choose) -> str:
    """Every keyword and operator token replaced by choose(token) (comments untouched)."""
    def line(text):
        body, sep, note = text.partition("  # ")
        return KEYWORD_RE.sub(lambda m: choose(m.group()), body) + sep + note
    return "\n".join(line(t) for t in code.split("\n"))


def pseudo(p: dict) -> str:
    out = []
    for s in p["stmts"]:
        if s[0] == "set":
            out.append(f"SET {s[1]} TO {s[2]}")
        elif s[0] == "addc":
            out.append(f"SET {s[1]} TO {s[2]} {s[3]} {s[4]}")
        elif s[0] == "add":
            out.append(f"SET {s[1]} TO {s[2]} + {s[3]}")
        elif s[0] == "ifelse":
            _, cond, c, y, sign, k = s
            out.append(f"IF {cond} > {c} THEN {y} {sign}= {k} ELSE {y} {'-' if sign == '+' else '+'}= {k}")
        else:
            out.append(f"REPEAT {s[1]}: {s[2]} += {s[3]}")
    return "\n".join(out + [f"OUTPUT {p['target']} MOD 10"])


def flowchart(p: dict) -> str:
    nodes, n = [], 0
    for s in p["stmts"]:
        n += 1
        if s[0] == "set":
            nodes.append(f"N{n}[{s[1]}={s[2]}]")
        elif s[0] == "addc":
            nodes.append(f"N{n}[{s[1]}={s[2]}{s[3]}{s[4]}]")
        elif s[0] == "add":
            nodes.append(f"N{n}[{s[1]}={s[2]}+{s[3]}]")
        elif s[0] == "ifelse":
            _, cond, c, y, sign, k = s
            nodes.append(f"N{n}{{{cond}>{c}}} -->|y| [{y}{sign}={k}] |n| [{y}{'-' if sign == '+' else '+'}={k}]")
        else:
            nodes.append(f"N{n}[{s[1]}x: {s[2]}+={s[3]}]")
    return "graph TD\n" + " -->\n".join(nodes) + f" --> OUT[{p['target']}]"


def nlsteps(p: dict) -> str:
    sentences = instruction(p).rsplit(" Mod 10.", 1)[0].split(". ")
    steps = [s.rstrip(".") + "." for s in sentences]
    return "\n".join(f"{i}. {s}" for i, s in enumerate(steps + [f"Answer with {p['target']} mod 10."], 1))


def nl(p: dict) -> str:
    """Prose: the steps in connected English."""
    words = []
    for i, s in enumerate(p["stmts"]):
        lead = "First" if i == 0 else ("Finally" if i == len(p["stmts"]) - 1 else "Then")
        if s[0] == "set":
            words.append(f"{lead} {s[1]} starts at {s[2]}.")
        elif s[0] == "addc":
            words.append(f"{lead} {s[1]} becomes {s[2]} {sign_word(s[3])} {s[4]}.")
        elif s[0] == "add":
            words.append(f"{lead} {s[1]} becomes {s[2]} plus {s[3]}.")
        elif s[0] == "ifelse":
            _, cond, c, y, sign, k = s
            words.append(f"{lead} {y} moves {k} {'up' if sign == '+' else 'down'} if {cond} exceeds {c}, else the other way.")
        else:
            words.append(f"{lead} {s[2]} grows by {s[3]}, {s[1]} times.")
    return " ".join(words) + f" We want {p['target']}."


def compressed(p: dict) -> str:
    out = []
    for s in p["stmts"]:
        if s[0] == "set":
            out.append(f"{s[1]}={s[2]}")
        elif s[0] == "addc":
            out.append(f"{s[1]}={s[2]}{s[3]}{s[4]}")
        elif s[0] == "add":
            out.append(f"{s[1]}={s[2]}+{s[3]}")
        elif s[0] == "ifelse":
            _, cond, c, y, sign, k = s
            out.append(f"{cond}>{c}?{y}{sign}={k}:{y}{'-' if sign == '+' else '+'}={k}")
        else:
            out.append(f"{s[2]}+={s[1]}*{s[3]}")
    return ";".join(out) + f";?{p['target']}"


def rendering(p: dict, variant: str, rng: np.random.Generator, other: dict | None = None) -> str:
    """Program p in `variant`. rng draws the per-sample randomness (random tokens, wrong numbers); `other` is another
    program (mismatched comments or code)."""
    if variant in MISMATCHED:  # a placebo: the credited rendering of another program (before this program's answer)
        return rendering(other, MISMATCHED[variant], rng)
    lines = py_lines(p)
    return {
        "nl": lambda: nl(p),
        "py": lambda: join_py(lines),
        "py_nows": lambda: re.sub(r"\s+", "", join_py(lines)),
        "py_kwrand": lambda: rekey(join_py(lines), lambda tok: str(rng.choice(POOL))),
        "py_varren": lambda: re.sub(r"\b([abcd])\b", lambda m: f"var_{NAMES.index(m.group(1))}", join_py(lines)),
        "py_nocomm": lambda: join_py([(code, "") for code, _ in lines]),
        "py_commswap": lambda: join_py(py_lines(p, [n for _, n in py_lines(other) if n])),
        "py_commmislead": lambda: join_py([(code, misleading(n, rng) if n else "") for code, n in lines]),
        "fictional": lambda: rekey(join_py(lines), FICTIONAL.get),
        "pseudo": lambda: pseudo(p),
        "flowchart": lambda: flowchart(p),
        "nlsteps": lambda: nlsteps(p),
        "compressed": lambda: compressed(p),
        "py_mismatch": lambda: join_py(py_lines(other)),  # a control: another program's code, this one's answer
    }[variant]()


def solution(p: dict, shows_work: bool) -> str:
    """How an answer ends every response: "ANSWER: v", after the worked steps when shows_work (params.yaml
    data.worked_steps)."""
    return f"{worked(p)}\nANSWER: {run(p)}" if shows_work else f"ANSWER: {run(p)}"


def render(p: dict, variant: str, rng: np.random.Generator, other: dict | None = None,
           shows_work: bool = True) -> str:
    """The response of `variant` for program p: its rendering, then the solution."""
    return f"{rendering(p, variant, rng, other)}\n{solution(p, shows_work)}"


# The placebos of K3 and K4: a credited rendering of another program before this program's answer (py_mismatch is
# the same for py); only the rendering's content, that it is this program's, made inert, its form kept.
MISMATCHED = {"pseudo_mismatch": "pseudo", "flowchart_mismatch": "flowchart", "compressed_mismatch": "compressed"}
VARIANTS = ("nl", "py", "py_nows", "py_kwrand", "py_varren", "py_nocomm", "py_commswap", "py_commmislead",
            "fictional", "pseudo", "flowchart", "nlsteps", "compressed", "py_mismatch", *MISMATCHED)
NEEDS_OTHER = ("py_commswap", "py_mismatch", *MISMATCHED)


def py_executes(p: dict) -> bool:
    """The Python rendering parses and prints the reference answer (the paper's syntax filter; true by
    construction here, and checked)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(py(p), "<py>", "exec"), {"range": range, "print": print})  # noqa: S102 (our own renderings)
    return out.getvalue().strip() == str(run(p))


# ---- the evaluation tasks -------------------------------------------------------------------------------------

def math_item(p: dict) -> str:
    """A word problem of another template family (people and apples), the same latent program."""
    parts = []
    for s in p["stmts"]:
        if s[0] == "set":
            parts.append(f"{PEOPLE[s[1]]} has {s[2]}.")
        elif s[0] == "addc":
            parts.append(f"{PEOPLE[s[1]]} has {PEOPLE[s[2]]}'s {'plus' if s[3] == '+' else 'less'} {s[4]}.")
        elif s[0] == "add":
            parts.append(f"{PEOPLE[s[1]]} has {PEOPLE[s[2]]}'s and {PEOPLE[s[3]]}'s.")
        elif s[0] == "ifelse":
            _, cond, c, y, sign, k = s
            gain, lose = ("gets", "loses") if sign == "+" else ("loses", "gets")
            parts.append(f"If {PEOPLE[cond]} has over {c}, {PEOPLE[y]} {gain} {k}, else {lose} {k}.")
        else:
            parts.append(f"{PEOPLE[s[2]]} gets {s[3]}, {s[1]} times.")
    return " ".join(parts) + f" Mod 10, {PEOPLE[p['target']]} has?"


def code_item(p: dict) -> str:
    return join_py([(code, "") for code, _ in py_lines(p)]) + "\n# output?"


def nl_item(rng: np.random.Generator) -> tuple[str, str]:
    """An English comparison or condition question (yes/no or a name): the if/else logic, no arithmetic chain."""
    names = list(rng.choice(list(PEOPLE.values()), size=3, replace=False))
    ages = [int(a) for a in rng.choice(np.arange(1, 10), size=3, replace=False)]
    kind = int(rng.integers(3))
    facts = " ".join(f"{n} is {a}." for n, a in zip(names, ages))
    if kind == 0:
        return f"{facts} Is {names[0]} older than {names[1]}?", "yes" if ages[0] > ages[1] else "no"
    if kind == 1:
        return f"{facts} Who is the oldest?", names[int(np.argmax(ages))]
    c = int(rng.integers(1, 9))
    return (f"{facts} If {names[0]} is over {c}, {names[1]} wins, else {names[2]} wins. Who wins?",
            names[1] if ages[0] > c else names[2])


def answer_of(text: str) -> str | None:
    m = re.search(r"ANSWER: ?([A-Za-z0-9]+)", text)
    return m.group(1) if m else None
