"""workflow/lib/text.py: R's XDR serialization and lazy-load database, read without R (known answers, bytes
written by hand with struct), and the Jane Austen novels from the fetched catalog files."""
import gzip
import math
import struct
import zlib
from pathlib import Path

import pytest

from workflow.lib.text import RFormatError, RSymbol, austen_novels, lazyload, named, unserialize

ROOT = Path(__file__).resolve().parents[1]
HAS_ATTR, HAS_TAG = 1 << 9, 1 << 10
ASCII, LATIN1, UTF8 = 1 << 6, 1 << 2, 1 << 3  # a CHARSXP's encoding flags, shifted into the levels (flags >> 12)


def ints(*v) -> bytes:
    return struct.pack(f">{len(v)}i", *v)


def header(version: int = 3) -> bytes:  # format, version, writer's R 4.2.1, reader's R 3.5.0 (+ native encoding)
    return b"X\n" + ints(version, 0x040201, 0x030500) + (ints(5) + b"UTF-8" if version == 3 else b"")


def char(s, levels: int = ASCII) -> bytes:
    raw = s if isinstance(s, bytes) else s.encode()
    return ints(9 | levels << 12, len(raw)) + raw


NA_CHAR = ints(9, -1)
NIL = ints(254)


def strsxp(*elements: bytes, flags: int = 0) -> bytes:
    return ints(16 | flags, len(elements)) + b"".join(elements)


def sym(name: str) -> bytes:
    return ints(1) + char(name)


def names_attr(tag: bytes, *names: str) -> bytes:
    """A one-node attribute pairlist, names = c(...); `tag` is the symbol `names` or a back-reference to it."""
    return ints(2 | HAS_TAG) + tag + strsxp(*map(char, names)) + NIL


def test_strsxp_with_na_and_encodings():
    data = header() + strsxp(char("a"), char("£", UTF8), char(b"\xe9", LATIN1), NA_CHAR, char(b"\xff\x00", 1 << 1))
    assert unserialize(data) == ["a", "£", "é", None, b"\xff\x00"]  # the last one is declared "bytes"


def test_atomic_vectors_and_their_nas():
    data = header(2) + ints(19, 3) + ints(13, 3, 7, -(2 ** 31), -1) + ints(10, 3, 1, 0, -(2 ** 31)) \
        + ints(14, 2) + struct.pack(">2d", 2.5, float("nan"))
    value = unserialize(data)
    assert value[0] == [7, None, -1] and value[1] == [True, False, None]
    assert value[2][0] == 2.5 and math.isnan(value[2][1])


def test_named_list_and_its_attributes():
    # list(a = 1L, b = c("x", "y")): the elements, then (HAS_ATTR) the attribute pairlist names = c("a", "b")
    data = header() + ints(19 | HAS_ATTR, 2) + ints(13, 1, 1) + strsxp(char("x"), char("y")) \
        + names_attr(sym("names"), "a", "b")
    value = unserialize(data)
    assert value.attrs == {"names": ["a", "b"]}
    assert named(value) == {"a": [1], "b": ["x", "y"]}
    with pytest.raises(RFormatError, match="without names"):
        named(value[1])


def test_a_tagged_pairlist_is_named_by_its_tags():
    # pairlist(k = 1L, 2L): node 1 has a tag, node 2 has none
    data = header() + ints(2 | HAS_TAG) + sym("k") + ints(13, 1, 1) + ints(2) + ints(13, 1, 2) + NIL
    value = unserialize(data)
    assert value == [[1], [2]] and value.attrs == {"names": ["k", ""]}


def test_refsxp_back_references_resolve_packed_and_unpacked():
    # list(c(p = 1L), c(q = 2L)): the symbol `names` is written once, then referred to as reference 1, packed into
    # the flags (1 << 8 | 255) in the second element, as R does; the unpacked form (index 0, then the index) too
    for ref in (ints(1 << 8 | 255), ints(255, 1)):
        data = header() + ints(19, 2) + ints(13 | HAS_ATTR, 1, 1) + names_attr(sym("names"), "p") \
            + ints(13 | HAS_ATTR, 1, 2) + names_attr(ref, "q")
        value = unserialize(data)
        assert [named(v) for v in value] == [{"p": 1}, {"q": 2}]
    with pytest.raises(RFormatError, match="back-reference 2 but only 1"):
        unserialize(header() + ints(19, 2) + sym("s") + ints(2 << 8 | 255))


def test_a_symbol_is_an_rsymbol():
    value = unserialize(header() + sym("emma"))
    assert isinstance(value, RSymbol) and value == "emma"


@pytest.mark.parametrize("sxp, name", [(4, "ENVSXP"), (3, "CLOSXP"), (238, "ALTREP_SXP"), (99, "unknown")])
def test_an_unsupported_type_is_named(sxp, name):
    with pytest.raises(RFormatError, match=f"type {name} \\(SEXPTYPE {sxp}\\)"):
        unserialize(header() + ints(19, 1) + ints(sxp))


def test_bad_headers_and_truncation_are_errors():
    with pytest.raises(RFormatError, match="format b'A\\\\n'"):
        unserialize(b"A\n" + header()[2:] + NIL)
    with pytest.raises(RFormatError, match="version 4"):
        unserialize(b"X\n" + ints(4, 0, 0) + NIL)
    with pytest.raises(RFormatError, match="truncated"):
        unserialize(header() + strsxp(char("abc"))[:-1])


def _lazyload_db(tmp_path, compressed: bytes):
    """A two-object lazy-load database written as R does: x <- c("one", NA); y <- 3L."""
    blobs = {"x": header() + strsxp(char("one"), NA_CHAR), "y": header() + ints(13, 1, 3)}
    rdb, keys = b"", []
    for data in blobs.values():
        blob = struct.pack(">I", len(data)) + zlib.compress(data)
        keys.append(ints(13, 2, len(rdb), len(blob)))
        rdb += blob
    index = header() + ints(19 | HAS_ATTR, 3) \
        + ints(19 | HAS_ATTR, 2) + b"".join(keys) + names_attr(sym("names"), "x", "y") \
        + ints(19, 0) + compressed + names_attr(ints(1 << 8 | 255), "variables", "references", "compressed")
    (tmp_path / "db.rdb").write_bytes(rdb)
    (tmp_path / "db.rdx").write_bytes(gzip.compress(index))
    return tmp_path / "db.rdb", tmp_path / "db.rdx"


def test_lazyload_reads_a_zlib_database(tmp_path):
    rdb, rdx = _lazyload_db(tmp_path, ints(10, 1, 1))  # compressed = TRUE: type 1, zlib
    assert lazyload(rdb, rdx) == {"x": ["one", None], "y": [3]}
    assert lazyload(rdb, rdx, ["y"]) == {"y": [3]}
    with pytest.raises(RFormatError, match=r"no object \['z'\]; it has \['x', 'y'\]"):
        lazyload(rdb, rdx, ["z"])
    rdb.write_bytes(rdb.read_bytes()[:-3])
    with pytest.raises(RFormatError, match="object 'y' needs"):
        lazyload(rdb, rdx)


def test_lazyload_refuses_other_compression_by_name(tmp_path):
    rdb, rdx = _lazyload_db(tmp_path, ints(13, 1, 3))  # compressed = 3L: xz
    with pytest.raises(RFormatError, match=r"compression type 3 \(xz\) is not supported"):
        lazyload(rdb, rdx)


RAW = ROOT / "data" / "raw"
FETCH = ("python -m workflow.core.fetch austen_rdb data/raw/austen_rdb.rdb && "
         "python -m workflow.core.fetch austen_rdx data/raw/austen_rdx.rdx")


@pytest.fixture(scope="module")
def novels():
    rdb, rdx = RAW / "austen_rdb.rdb", RAW / "austen_rdx.rdx"
    if not (rdb.is_file() and rdx.is_file()):
        pytest.skip(f"the Austen files are not in data/raw; fetch them with `{FETCH}`")
    return austen_novels(rdb, rdx)


def test_the_six_novels(novels):
    assert sorted(novels) == ["emma", "mansfieldpark", "northangerabbey", "persuasion", "prideprejudice",
                              "sensesensibility"]
    lines = sum(text.count("\n") + 1 for text in novels.values())
    assert lines == 73422  # the rows of janeaustenr's austen_books()
    assert 3.9e6 < sum(map(len, novels.values())) - (lines - 6) < 4.0e6  # the lines' characters, without "\n"
    assert sum(map(len, novels.values())) == 4_025_022  # joined with "\n"


def test_pride_and_prejudice(novels):
    text = novels["prideprejudice"]
    assert text.startswith("PRIDE AND PREJUDICE\n\nBy Jane Austen")
    assert "It is a truth universally acknowledged, that a single man in possession" in text
    assert "£" in novels["mansfieldpark"]  # the one non-ASCII character, a UTF-8 string
