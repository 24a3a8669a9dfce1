"""A character tokenizer for the tiny language models (workflow/lib/tinylm.py): a fixed alphabet plus the special
tokens the masked-diffusion and autoregressive papers need. No torch here: a data step can encode without it."""
from __future__ import annotations

SPECIALS = ("<pad>", "<mask>", "<eos>")


class CharVocab:
    """Characters of a fixed alphabet plus <pad>, <mask> and <eos>. Encoding an unknown character is an error that
    names it (a task generator and its vocabulary must agree)."""

    def __init__(self, alphabet: str):
        if len(set(alphabet)) != len(alphabet):
            raise ValueError(f"alphabet {alphabet!r} repeats a character")
        self.itos = list(SPECIALS) + list(alphabet)
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        self.pad, self.mask, self.eos = (self.stoi[s] for s in SPECIALS)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str, length: int | None = None, fill: int | None = None) -> list[int]:
        """The ids of `text`, right-filled with `fill` (default <pad>) to `length` if given."""
        unknown = sorted(set(text) - set(self.stoi))
        if unknown:
            raise ValueError(f"characters {unknown} are not in the vocabulary {''.join(self.itos[len(SPECIALS):])!r}")
        ids = [self.stoi[c] for c in text]
        if length is not None:
            if len(ids) > length:
                raise ValueError(f"{text!r} has {len(ids)} characters, more than the {length} allowed")
            ids += [self.pad if fill is None else fill] * (length - len(ids))
        return ids

    def decode(self, ids, stop_at_eos: bool = True) -> str:
        """Text of the ids: stops at the first <eos> if asked; <pad> is dropped and <mask> shown as '_'."""
        out = []
        for i in map(int, ids):
            if i == self.eos and stop_at_eos:
                break
            out.append({self.pad: "", self.mask: "_", self.eos: "$"}.get(i, self.itos[i]))
        return "".join(out)
