"""Real English text for the tiny language models: Jane Austen's six novels, read without R.

The catalog's `austen_rdb` and `austen_rdx` (data/raw/austen_rdb.rdb, data/raw/austen_rdx.rdx) are the lazy-load
database of the R package janeaustenr, taken from its Debian package. R is not installed here, so this module reads
the two formats involved itself, from their documentation (R's serialize.c, "R Internals"), not from an R parser:

- R serialization, XDR binary ("X\\n", versions 2 and 3), for the few object types these files use. Anything else
  (environments, closures, ALTREP, ...) is an RFormatError that names the type, never a guess.
- the lazy-load database: the .rdx is a (gzipped) serialized list(variables = list(name = c(offset, length)),
  references = list(...), compressed = TRUE); each object in the .rdb is a 4-byte big-endian uncompressed length
  followed by zlib data (compression type 1; types 2 = bzip2 and 3 = xz are refused by name).

R values become: NULL -> None; character/integer/logical/double vectors and lists -> RVector (a list with `.attrs`);
NA -> None (NA_real_ stays a NaN); symbols -> RSymbol (a str); pairlists -> RVector named by their tags.
"""
from __future__ import annotations

import gzip
import struct
import zlib
from pathlib import Path

# SEXPTYPE codes (Rinternals.h) and serialize.c's pseudo-types: the names make errors readable
SEXP_NAMES = {
    0: "NILSXP", 1: "SYMSXP", 2: "LISTSXP", 3: "CLOSXP", 4: "ENVSXP", 5: "PROMSXP", 6: "LANGSXP", 7: "SPECIALSXP",
    8: "BUILTINSXP", 9: "CHARSXP", 10: "LGLSXP", 13: "INTSXP", 14: "REALSXP", 15: "CPLXSXP", 16: "STRSXP",
    17: "DOTSXP", 18: "ANYSXP", 19: "VECSXP", 20: "EXPRSXP", 21: "BCODESXP", 22: "EXTPTRSXP", 23: "WEAKREFSXP",
    24: "RAWSXP", 25: "S4SXP", 238: "ALTREP_SXP", 239: "ATTRLISTSXP", 240: "ATTRLANGSXP", 241: "BASEENV_SXP",
    242: "EMPTYENV_SXP", 243: "BCREPREF", 244: "BCREPDEF", 245: "GENERICREFSXP", 246: "CLASSREFSXP",
    247: "PERSISTSXP", 248: "PACKAGESXP", 249: "NAMESPACESXP", 250: "BASENAMESPACE_SXP", 251: "MISSINGARG_SXP",
    252: "UNBOUNDVALUE_SXP", 253: "GLOBALENV_SXP", 254: "NILVALUE_SXP", 255: "REFSXP",
}
SYMSXP, LISTSXP, CHARSXP, LGLSXP, INTSXP, REALSXP, STRSXP, VECSXP, EXPRSXP = 1, 2, 9, 10, 13, 14, 16, 19, 20
NILVALUE_SXP, REFSXP = 254, 255
HAS_ATTR, HAS_TAG = 1 << 9, 1 << 10  # flag bits; bits 0-7 are the type, bits 12+ the "levels" (gp field)
BYTES_MASK, LATIN1_MASK, UTF8_MASK, ASCII_MASK = 1 << 1, 1 << 2, 1 << 3, 1 << 6  # a CHARSXP's encoding, in levels
NA_INTEGER = -(2 ** 31)  # also NA for logicals

# The six novels, by their object names in the package, with the titles janeaustenr's austen_books() gives them
TITLES = {
    "sensesensibility": "Sense & Sensibility", "prideprejudice": "Pride & Prejudice",
    "mansfieldpark": "Mansfield Park", "emma": "Emma", "northangerabbey": "Northanger Abbey",
    "persuasion": "Persuasion",
}


class RFormatError(ValueError):
    pass


class RSymbol(str):
    """An R symbol (a name): a str, so tags and attribute names compare with plain strings."""


class RVector(list):
    """An R vector or list: its elements, plus its R attributes (e.g. "names", "class") in `.attrs`."""

    def __init__(self, values=(), attrs: dict | None = None):
        super().__init__(values)
        self.attrs = attrs or {}


def named(value: RVector) -> dict:
    """A named R list or vector as a dict (name -> element); an error if it has no names."""
    names = getattr(value, "attrs", {}).get("names")
    if names is None:
        raise RFormatError(f"expected a named R list, got {type(value).__name__} without names")
    return dict(zip(names, value))


class _Reader:
    def __init__(self, data: bytes):
        self.buf, self.pos = data, 0
        self.refs: list = []  # objects a later REFSXP can point back to (1-based), in the order they were read
        self.native = "utf-8"  # the writer's native encoding, for strings not flagged UTF-8/latin1/ASCII

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise RFormatError(f"truncated R serialization: {n} bytes wanted at byte {self.pos} of {len(self.buf)}")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def int(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def length(self) -> int:
        n = self.int()
        if n == -1:  # a long vector (>= 2^31 elements): the length follows as two 32-bit halves
            hi, lo = struct.unpack(">II", self.take(8))
            return (hi << 32) + lo
        if n < -1:
            raise RFormatError(f"negative vector length {n} at byte {self.pos - 4}")
        return n

    def item(self):
        return self._item(self.int())

    def _item(self, flags: int):
        sxp, levels = flags & 0xFF, flags >> 12
        if sxp == NILVALUE_SXP:
            return None
        if sxp == REFSXP:  # the index is packed into the flags, or follows them when it does not fit
            index = (flags >> 8) or self.int()
            if not 1 <= index <= len(self.refs):
                raise RFormatError(f"REFSXP back-reference {index} but only {len(self.refs)} objects to refer to")
            return self.refs[index - 1]
        if sxp == SYMSXP:  # written once, then referred to by REFSXP: it must enter the table when first read
            symbol = RSymbol(self.item())
            self.refs.append(symbol)
            return symbol
        if sxp == CHARSXP:
            value = self._charsxp(levels)
            if flags & HAS_ATTR:
                self.item()  # R discards a CHARSXP's attributes too
            return value
        if sxp == LISTSXP:
            tags, values, attrs = self._pairlist(flags)
            if any(t is not None for t in tags):
                attrs = {"names": [str(t) if t is not None else "" for t in tags], **attrs}
            return RVector(values, attrs)
        if sxp in (LGLSXP, INTSXP, REALSXP, STRSXP, VECSXP, EXPRSXP):
            n = self.length()
            if sxp in (STRSXP, VECSXP, EXPRSXP):  # each element is a whole item (a CHARSXP for strings)
                values = [self.item() for _ in range(n)]
            elif sxp == REALSXP:
                values = struct.unpack(f">{n}d", self.take(8 * n))
            else:
                ints = struct.unpack(f">{n}i", self.take(4 * n))
                values = [None if i == NA_INTEGER else (bool(i) if sxp == LGLSXP else i) for i in ints]
            # vectors write their attributes after the elements (pairlists before)
            return RVector(values, self._attributes() if flags & HAS_ATTR else None)
        name = SEXP_NAMES.get(sxp, "unknown")
        raise RFormatError(f"R object of type {name} (SEXPTYPE {sxp}) at byte {self.pos - 4} is not supported by "
                           "this reader (it handles NULL, symbols, pairlists, strings, logical/integer/double "
                           "vectors, lists and back-references)")

    def _charsxp(self, levels: int):
        n = self.int()
        if n == -1:
            return None  # NA_character_
        raw = self.take(n)
        if levels & BYTES_MASK:
            return raw  # declared "bytes": R never re-encodes these, so neither do we
        codec = "latin-1" if levels & LATIN1_MASK else "utf-8" if levels & (UTF8_MASK | ASCII_MASK) else self.native
        try:
            return raw.decode(codec)
        except (UnicodeDecodeError, LookupError) as exc:
            raise RFormatError(f"string at byte {self.pos - n} does not decode as {codec}: {exc}") from None

    def _pairlist(self, flags: int):
        """A pairlist's tags, values and attributes. Walked as a loop, not by recursing on each CDR as R does: a
        long pairlist would otherwise exhaust Python's recursion limit."""
        tags, values, attrs = [], [], None
        while flags & 0xFF == LISTSXP:
            node_attrs = self._attributes() if flags & HAS_ATTR else {}  # order: attributes, tag, CAR, CDR
            attrs = node_attrs if attrs is None else attrs  # only the first node's attributes are the list's
            tags.append(self.item() if flags & HAS_TAG else None)
            values.append(self.item())
            flags = self.int()
        if flags & 0xFF != NILVALUE_SXP:
            raise RFormatError(f"pairlist ending in {SEXP_NAMES.get(flags & 0xFF, flags & 0xFF)} (a dotted pair) "
                               "is not supported")
        return tags, values, attrs or {}

    def _attributes(self) -> dict:
        flags = self.int()
        if flags & 0xFF != LISTSXP:
            raise RFormatError(f"attributes must be a pairlist, got {SEXP_NAMES.get(flags & 0xFF, flags & 0xFF)}")
        tags, values, _ = self._pairlist(flags)
        return {str(t): v for t, v in zip(tags, values)}


def unserialize(data: bytes):
    """The R object serialized in `data` (XDR binary format, version 2 or 3, as written by serialize/saveRDS)."""
    reader = _Reader(bytes(data))
    kind = reader.take(2)
    if kind != b"X\n":
        raise RFormatError(f"R serialization format {kind!r} is not supported; only XDR binary (b'X\\n') is. "
                           "(ASCII 'A' and native binary 'B' are rare in files R writes.)")
    version = reader.int()
    reader.take(8)  # the writer's R version and the oldest R version that can read the data: not needed here
    if version not in (2, 3):
        raise RFormatError(f"R serialization version {version} is not supported (2 or 3 are)")
    if version == 3:
        reader.native = reader.take(reader.int()).decode("ascii")
    return reader.item()


def _decompress(blob: bytes, compression, name: str) -> bytes:
    """One .rdb object's serialized bytes. The 4-byte length is the uncompressed size, so a short or corrupt
    object is caught here instead of as a confusing error mid-parse."""
    if compression is False or compression == 0:
        return blob
    if compression is not True and compression != 1:
        kind = {2: "bzip2", 3: "xz"}.get(compression, "unknown")
        raise RFormatError(f"lazy-load database compression type {compression} ({kind}) is not supported; only "
                           "type 1 (zlib) is")
    size = struct.unpack(">I", blob[:4])[0]
    try:
        data = zlib.decompress(blob[4:])
    except zlib.error as exc:
        raise RFormatError(f"object '{name}' of the lazy-load database is not valid zlib data: {exc}") from None
    if len(data) != size:
        raise RFormatError(f"object '{name}' inflates to {len(data)} bytes, its header says {size}")
    return data


def lazyload(rdb_path, rdx_path, names=None) -> dict:
    """Objects of an R lazy-load database (.rdb data, .rdx index): name -> R value, for `names` (default: all)."""
    raw = Path(rdx_path).read_bytes()
    if raw[:2] == b"\x1f\x8b":  # R writes the index gzipped
        raw = gzip.decompress(raw)
    index = named(unserialize(raw))
    variables = named(index["variables"])
    compression = (index.get("compressed") or [True])[0]
    missing = sorted(set(names or ()) - set(variables))
    if missing:
        raise RFormatError(f"{rdx_path} indexes no object {missing}; it has {sorted(variables)}")
    rdb = Path(rdb_path).read_bytes()
    out = {}
    for name in names or variables:
        offset, length = (int(x) for x in variables[name])  # integer, or double in very large databases
        if offset + length > len(rdb):
            raise RFormatError(f"{rdb_path} has {len(rdb)} bytes; object '{name}' needs {offset + length}")
        out[name] = unserialize(_decompress(rdb[offset:offset + length], compression, name))
    return out


def austen_novels(rdb_path, rdx_path) -> dict[str, str]:
    """Jane Austen's six novels, object name (see TITLES) -> full text, the package's lines joined with "\\n"."""
    objects = lazyload(rdb_path, rdx_path, list(TITLES))
    novels = {}
    for name, lines in objects.items():
        if not all(isinstance(line, str) for line in lines):
            raise RFormatError(f"novel '{name}' in {rdb_path} is not a character vector without NAs")
        novels[name] = "\n".join(lines)
    return novels
