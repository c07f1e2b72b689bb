#!/usr/bin/env python3
"""Checker for the TGSI sample corpus in tgsi-samples/.

Every sample must be exactly what Mesa's tgsi_dump prints (see
docs/tgsi-text-format.md section 6 in the shared docs).  This script parses each
file line by line with a strict reader of the *canonical* dump format, prints it
back and compares byte for byte, and then runs semantic checks:

  * header VERT/FRAG/COMP (any stage is read, but we only ship those three);
  * order: properties, declarations, immediates, instructions (as ureg emits
    them), declarations in ureg's file order, numbering from 0, indentation;
  * FLT32 immediates must be exactly the decimal value printed (so the value
    survives print -> parse -> print and any decimal-based reimplementation);
  * operand counts, texture targets, offsets, memory items and labels per the
    opcode table tools/tgsi-opcodes.csv;
  * every register used is declared (indirect accesses must stay inside a
    declared range / array), IMM indices exist;
  * no TEMP/ADDR channel is read before some earlier instruction (in text
    order) wrote it; every declared output channel is written; every declared
    register is used;
  * stage rules (FS-only opcodes, no implicit-LOD texturing outside FS,
    BARRIER only in CS), END present once and last (only BGNSUB..ENDSUB
    subroutine bodies may follow it);
  * immediate type vs operand type (a FLT32 immediate feeding an integer
    operand or the other way round) is reported as a warning.

Usage: tools/check-samples.py [--coverage] [--warnings-as-errors] [PATH...]
(default PATH: tgsi-samples/).  Exit status 1 if any error was found.
"""

import csv
import os
import re
import struct
import sys
from decimal import Decimal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

PROCESSORS = ["VERT", "TESS_CTRL", "TESS_EVAL", "GEOM", "FRAG", "COMP"]

FILES = ["NULL", "CONST", "IN", "OUT", "TEMP", "SAMP", "ADDR", "IMM", "SV",
         "IMAGE", "SVIEW", "BUFFER", "MEMORY", "CONSTBUF", "HWATOMIC"]
LEGACY_FILES = ["LOOP", "PRED", "IMMX", "TEMPX", "RES"]

SEMANTICS = ["POSITION", "COLOR", "BCOLOR", "FOG", "PSIZE", "GENERIC",
             "NORMAL", "FACE", "EDGEFLAG", "PRIM_ID", "INSTANCEID", "VERTEXID",
             "STENCIL", "CLIPDIST", "CLIPVERTEX", "GRID_SIZE", "BLOCK_ID",
             "BLOCK_SIZE", "THREAD_ID", "TEXCOORD", "PCOORD", "VIEWPORT_INDEX",
             "LAYER", "SAMPLEID", "SAMPLEPOS", "SAMPLEMASK", "INVOCATIONID",
             "VERTEXID_NOBASE", "BASEVERTEX", "PATCH", "TESSCOORD",
             "TESSOUTER", "TESSINNER", "VERTICESIN", "HELPER_INVOCATION",
             "BASEINSTANCE", "DRAWID", "WORK_DIM", "SUBGROUP_SIZE",
             "SUBGROUP_INVOCATION", "SUBGROUP_EQ_MASK", "SUBGROUP_GE_MASK",
             "SUBGROUP_GT_MASK", "SUBGROUP_LE_MASK", "SUBGROUP_LT_MASK",
             "CS_USER_DATA_AMD", "VIEWPORT_MASK"]

INTERPOLATIONS = ["CONSTANT", "LINEAR", "PERSPECTIVE", "COLOR"]
LOCATIONS = ["CENTER", "CENTROID", "SAMPLE"]

TARGETS = ["BUFFER", "1D", "2D", "3D", "CUBE", "RECT", "SHADOW1D", "SHADOW2D",
           "SHADOWRECT", "1D_ARRAY", "2D_ARRAY", "SHADOW1D_ARRAY",
           "SHADOW2D_ARRAY", "SHADOWCUBE", "2D_MSAA", "2D_ARRAY_MSAA",
           "CUBEARRAY", "SHADOWCUBEARRAY", "UNKNOWN"]
RETURN_TYPES = ["UNORM", "SNORM", "SINT", "UINT", "FLOAT"]
MEMORY_TYPES = ["GLOBAL", "SHARED", "PRIVATE", "INPUT"]
QUALIFIERS = ["COHERENT", "RESTRICT", "VOLATILE", "STREAM_CACHE_POLICY"]

PRIMITIVES = ["POINTS", "LINES", "LINE_LOOP", "LINE_STRIP", "TRIANGLES",
              "TRIANGLE_STRIP", "TRIANGLE_FAN", "QUADS", "QUAD_STRIP",
              "POLYGON", "LINES_ADJACENCY", "LINE_STRIP_ADJACENCY",
              "TRIANGLES_ADJACENCY", "TRIANGLE_STRIP_ADJACENCY", "PATCHES"]
PROPERTIES = {
    "GS_INPUT_PRIMITIVE": PRIMITIVES, "GS_OUTPUT_PRIMITIVE": PRIMITIVES,
    "GS_MAX_OUTPUT_VERTICES": int, "FS_COORD_ORIGIN": ["UPPER_LEFT", "LOWER_LEFT"],
    "FS_COORD_PIXEL_CENTER": ["HALF_INTEGER", "INTEGER"],
    "FS_COLOR0_WRITES_ALL_CBUFS": int, "FS_DEPTH_LAYOUT": int,
    "VS_PROHIBIT_UCPS": int, "GS_INVOCATIONS": int,
    "VS_WINDOW_SPACE_POSITION": int, "TCS_VERTICES_OUT": int,
    "TES_PRIM_MODE": int, "TES_SPACING": int, "TES_VERTEX_ORDER_CW": int,
    "TES_POINT_MODE": int, "NUM_CLIPDIST_ENABLED": int,
    "NUM_CULLDIST_ENABLED": int, "FS_EARLY_DEPTH_STENCIL": int,
    "FS_POST_DEPTH_COVERAGE": int,
    "NEXT_SHADER": ["VERT", "TESS_CTRL", "TESS_EVAL", "GEOM", "FRAG", "COMP",
                    "TASK", "MESH"],
    "CS_FIXED_BLOCK_WIDTH": int, "CS_FIXED_BLOCK_HEIGHT": int,
    "CS_FIXED_BLOCK_DEPTH": int, "LEGACY_MATH_RULES": int,
    "VS_BLIT_SGPRS_AMD": int, "CS_USER_DATA_COMPONENTS_AMD": int,
    "LAYER_VIEWPORT_RELATIVE": int, "FS_BLEND_EQUATION_ADVANCED": int,
    "SEPARABLE_PROGRAM": int,
}

# ureg's declaration order (tgsi_ureg.c emit_decls).
DECL_ORDER = ["IN", "SV", "OUT", "SAMP", "SVIEW", "RES", "IMAGE", "BUFFER",
              "MEMORY", "CONST", "HWATOMIC", "TEMP", "ADDR", "LOOP", "PRED"]

# SAMPLE .. GATHER4: offsets allowed, no target printed.
SAMPLE_OPS = {"SAMPLE", "SAMPLE_I", "SAMPLE_I_MS", "SAMPLE_B", "SAMPLE_C",
              "SAMPLE_C_LZ", "SAMPLE_D", "SAMPLE_L", "GATHER4"}
LABEL_OPS = {"IF", "UIF", "ELSE", "BGNLOOP", "ENDLOOP", "CAL",
             "BGNLOOP2", "ENDLOOP2", "CALL"}
INDENT_AFTER = {"IF", "UIF", "ELSE", "BGNLOOP", "BGNSUB", "BGNFOR"}
DEDENT_BEFORE = {"ELSE", "ENDIF", "ENDLOOP", "ENDSUB", "ENDFOR"}

# Opcodes whose use of implicit derivatives makes them FS-only in practice.
IMPLICIT_LOD = {"TEX", "TXP", "TXB", "TEX2", "TXB2", "LODQ", "SAMPLE",
                "SAMPLE_B", "SAMPLE_C", "GATHER4_IMPLICIT", "TEXLD", "TEXLDB"}

XYZW = "xyzw"


def load_formats():
    path = os.path.join(ROOT, "src", "tgsi", "formats.rs")
    names = []
    try:
        with open(path) as f:
            text = f.read()
        body = text.split("pub static FORMATS", 1)[1]
        names = re.findall(r'"([A-Za-z0-9_]+)"', body)
    except (OSError, IndexError):
        pass
    # Mesa 25.0.7 can only parse the first 425 names and none with
    # lower-case letters.
    return {n for n in names[:425] if n == n.upper()}


FORMATS = load_formats()


class Op:
    def __init__(self, row):
        self.name = row["name"]
        self.status = row["status"]
        self.ndst = int(row["num_dst"])
        self.nsrc = int(row["num_src"])
        self.is_tex = row["is_texture"] == "1"
        self.tex_no_target = row["texture_bit_without_target"] == "1"
        self.memory = row["memory_qualifier_list"] == "1"
        self.mode = row["mesa_output_mode"]
        self.src_types = [t for t in row["src_types"].split(",") if t]
        self.dst_type = row["dst_type"]
        self.stages = row["stages"]
        self.flow = row["flow"]


def load_opcodes():
    path = os.path.join(ROOT, "tools", "tgsi-opcodes.csv")
    current, legacy = {}, {}
    with open(path) as f:
        for row in csv.DictReader(f):
            op = Op(row)
            if op.status == "current":
                current[op.name] = op
            else:
                legacy[op.name] = op
    return current, legacy


CURRENT_OPS, LEGACY_OPS = load_opcodes()

# Memory items are accepted for opcodes 161-176 and RESQ only.
MEMORY_ITEM_OPS = {"LOAD", "STORE", "IMG2HND", "SAMP2HND", "BARRIER",
                   "ATOMUADD", "ATOMXCHG", "ATOMCAS", "ATOMAND", "ATOMOR",
                   "ATOMXOR", "ATOMUMIN", "ATOMUMAX", "ATOMIMIN", "ATOMIMAX",
                   "RESQ"}

WIDE_TYPES = {"double", "int64", "uint64"}


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

class CheckError(Exception):
    pass


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def fmt_flt32(text):
    """Return (canonical text, exact?) for a FLT32 immediate written as text."""
    v = f32(float(text))
    return "%10.4f" % v, Decimal(v) == Decimal(text.strip())


def mask_str(mask):
    return "" if mask == XYZW else "." + mask


def valid_mask(m):
    return m != "" and all(c in XYZW for c in m) and list(m) == sorted(
        set(m), key=XYZW.index)


# ---------------------------------------------------------------------------
# Operand parsing (canonical form only)
# ---------------------------------------------------------------------------

REG_RE = re.compile(r"([A-Z]+)")
INDIRECT_RE = re.compile(r"([A-Z]+)\[(\d+)\]\.([xyzw])(?:([+-])(\d+))?$")


class Index:
    """One bracket: direct (value) or indirect (file, index, comp, offset)."""

    def __init__(self, text):
        self.text = text
        self.array_id = 0
        m = re.match(r"^(.*?)(?:\((\d+)\))?$", text)
        body, aid = m.group(1), m.group(2)
        if not (body.startswith("[") and body.endswith("]")):
            raise CheckError("bad bracket %r" % text)
        body = body[1:-1]
        if re.fullmatch(r"\d+", body):
            self.indirect = None
            self.value = int(body)
            if body != str(self.value):
                raise CheckError("non-canonical index %r" % body)
            if aid is not None:
                raise CheckError("array id on a direct index is not printed")
        else:
            m2 = INDIRECT_RE.match(body)
            if not m2:
                raise CheckError("bad indirect index %r" % body)
            f, i, c, sign, off = m2.groups()
            if f not in FILES and f not in LEGACY_FILES:
                raise CheckError("unknown address file %r" % f)
            self.indirect = (f, int(i), c)
            self.value = 0
            if sign:
                if off != str(int(off)) or int(off) == 0:
                    raise CheckError("non-canonical indirect offset %r" % body)
                self.value = int(off) if sign == "+" else -int(off)
            if aid is not None:
                if aid != str(int(aid)) or int(aid) == 0:
                    raise CheckError("array id (0) is not printed")
                self.array_id = int(aid)

    def canonical(self):
        if self.indirect is None:
            return "[%d]" % self.value
        f, i, c = self.indirect
        s = "[%s[%d].%s" % (f, i, c)
        if self.value > 0:
            s += "+%d" % self.value
        elif self.value < 0:
            s += "-%d" % -self.value
        s += "]"
        if self.array_id:
            s += "(%d)" % self.array_id
        return s


def split_brackets(text):
    """Split 'FILE[..][..].swz' into file, list of bracket texts, rest."""
    m = REG_RE.match(text)
    if not m:
        raise CheckError("expected register in %r" % text)
    fname = m.group(1)
    pos = m.end()
    brackets = []
    while pos < len(text) and text[pos] == "[":
        depth = 0
        start = pos
        while True:
            if pos >= len(text):
                raise CheckError("unbalanced brackets in %r" % text)
            ch = text[pos]
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    pos += 1
                    break
            pos += 1
        if pos < len(text) and text[pos] == "(":
            end = text.index(")", pos)
            pos = end + 1
        brackets.append(text[start:pos])
    if not brackets or len(brackets) > 2:
        raise CheckError("expected one or two brackets in %r" % text)
    return fname, brackets, text[pos:]


class Register:
    def __init__(self, text):
        self.file, brackets, self.rest = split_brackets(text)
        if self.file not in FILES and self.file not in LEGACY_FILES:
            raise CheckError("unknown register file %r" % self.file)
        self.indices = [Index(b) for b in brackets]

    @property
    def dim(self):
        return self.indices[0] if len(self.indices) == 2 else None

    @property
    def index(self):
        return self.indices[-1]

    def canonical(self):
        return self.file + "".join(i.canonical() for i in self.indices)


class Src:
    def __init__(self, text):
        self.text = text
        t = text
        self.neg = t.startswith("-")
        if self.neg:
            t = t[1:]
        self.abs = t.startswith("|")
        if self.abs:
            if not t.endswith("|"):
                raise CheckError("unclosed |x| in %r" % text)
            t = t[1:-1]
        self.reg = Register(t)
        rest = self.reg.rest
        if rest == "":
            self.swz = XYZW
        elif re.fullmatch(r"\.[xyzw]{4}", rest):
            self.swz = rest[1:]
            if self.swz == XYZW:
                raise CheckError("identity swizzle must not be printed: %r" % text)
        else:
            raise CheckError("bad source swizzle %r in %r" % (rest, text))

    def canonical(self):
        s = ("-" if self.neg else "") + ("|" if self.abs else "")
        s += self.reg.canonical()
        if self.swz != XYZW:
            s += "." + self.swz
        if self.abs:
            s += "|"
        return s


class Dst:
    def __init__(self, text):
        self.text = text
        self.reg = Register(text)
        rest = self.reg.rest
        if rest == "":
            self.mask = XYZW
        elif rest.startswith(".") and valid_mask(rest[1:]):
            self.mask = rest[1:]
            if self.mask == XYZW:
                raise CheckError("full write mask must not be printed: %r" % text)
        else:
            raise CheckError("bad write mask %r in %r" % (rest, text))

    def canonical(self):
        return self.reg.canonical() + mask_str(self.mask)


# ---------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------

class Decl:
    pass


def parse_decl(line, proc):
    d = Decl()
    m = re.match(r"^DCL ([A-Z]+)((?:\[[^\]]*\])+)(\.[xyzw]+)?(.*)$", line)
    if not m:
        raise CheckError("bad declaration")
    d.file = m.group(1)
    if d.file not in FILES and d.file not in LEGACY_FILES:
        raise CheckError("unknown file %r" % d.file)
    if d.file == "IMM":
        raise CheckError("IMM is never declared with DCL")
    brackets = re.findall(r"\[([^\]]*)\]", m.group(2))
    d.dim = None
    if len(brackets) == 2:
        if not re.fullmatch(r"\d+", brackets[0]):
            raise CheckError("bad dimension")
        d.dim = int(brackets[0])
        rng = brackets[1]
    elif len(brackets) == 1:
        rng = brackets[0]
    else:
        raise CheckError("too many brackets")
    mr = re.fullmatch(r"(\d+)(?:\.\.(\d+))?", rng)
    if not mr:
        raise CheckError("bad range %r" % rng)
    d.first = int(mr.group(1))
    d.last = int(mr.group(2)) if mr.group(2) is not None else d.first
    if mr.group(2) is not None and d.last <= d.first:
        raise CheckError("range must have first < last (a single register is printed as [n])")
    d.mask = m.group(3)[1:] if m.group(3) else XYZW
    if m.group(3) and (not valid_mask(d.mask) or d.mask == XYZW):
        raise CheckError("bad usage mask")
    rest = m.group(4)
    items = []
    if rest:
        if not rest.startswith(", "):
            raise CheckError("expected ', ' after register")
        items = rest[2:].split(", ")
    d.array = None
    d.local = False
    d.semantic = None
    d.sem_index = 0
    d.interp = None
    d.location = None
    d.invariant = False
    d.target = None
    d.rtype = None
    d.fmt = None
    d.wr = d.raw = d.atomic = False
    d.memtype = None
    it = iter(items)
    items = list(items)
    i = 0

    def peek():
        return items[i] if i < len(items) else None

    if peek() and peek().startswith("ARRAY("):
        ma = re.fullmatch(r"ARRAY\((\d+)\)", peek())
        if not ma:
            raise CheckError("bad ARRAY()")
        d.array = int(ma.group(1))
        i += 1
    if proc == "VERT" and d.file == "IN":
        if i != len(items):
            raise CheckError("vertex-shader inputs take no attributes after ARRAY")
        return d
    if d.file == "IMAGE":
        if peek() not in TARGETS:
            raise CheckError("IMAGE needs a target")
        d.target = peek()
        i += 1
        f = peek() or ""
        if not f.startswith("PIPE_FORMAT_") or f[12:] not in FORMATS:
            raise CheckError("IMAGE needs a known, parseable PIPE_FORMAT_ name")
        d.fmt = f
        i += 1
        if peek() == "WR":
            d.wr = True
            i += 1
        if peek() == "RAW":
            d.raw = True
            i += 1
    elif d.file in ("SVIEW", "RES") and not (d.file == "RES" and peek() in (None,)):
        if peek() not in TARGETS and peek() not in ("1DARRAY", "2DARRAY", "SHADOW1DARRAY", "SHADOW2DARRAY"):
            raise CheckError("SVIEW needs a target")
        d.target = peek()
        i += 1
        if d.file == "SVIEW" or (peek() in RETURN_TYPES):
            if peek() not in RETURN_TYPES:
                raise CheckError("SVIEW needs a return type")
            d.rtype = peek()
            i += 1
        else:
            if peek() == "RAW":
                d.raw = True
                i += 1
            if peek() == "WR":
                d.wr = True
                i += 1
    elif d.file == "BUFFER":
        if peek() == "ATOMIC":
            d.atomic = True
            i += 1
    elif d.file == "MEMORY":
        if peek() not in MEMORY_TYPES:
            raise CheckError("MEMORY declarations always print their type")
        d.memtype = peek()
        i += 1
    else:
        if peek() == "LOCAL":
            d.local = True
            i += 1
        s = peek()
        if s is not None:
            ms = re.fullmatch(r"([A-Z_]+)(?:\[(\d+)\])?", s)
            if ms and ms.group(1) in SEMANTICS:
                d.semantic = ms.group(1)
                if ms.group(2) is not None:
                    d.sem_index = int(ms.group(2))
                    if ms.group(2) != str(d.sem_index):
                        raise CheckError("non-canonical semantic index")
                    if d.sem_index == 0 and d.semantic not in ("GENERIC", "TEXCOORD"):
                        raise CheckError("semantic index 0 is printed only for GENERIC/TEXCOORD")
                elif d.semantic in ("GENERIC", "TEXCOORD"):
                    raise CheckError("GENERIC/TEXCOORD always print their index")
                i += 1
    if peek() in INTERPOLATIONS:
        if not (proc == "FRAG" and d.file == "IN"):
            raise CheckError("interpolation mode is printed only for FS inputs")
        d.interp = peek()
        i += 1
        if peek() in ("CENTROID", "SAMPLE"):
            d.location = peek()
            i += 1
    if peek() == "INVARIANT":
        d.invariant = True
        i += 1
    if i != len(items):
        raise CheckError("unexpected declaration item %r (wrong order?)" % items[i])
    return d


def print_decl(d, proc):
    s = "DCL " + d.file
    if d.dim is not None:
        s += "[%d]" % d.dim
    s += "[%d]" % d.first if d.first == d.last else "[%d..%d]" % (d.first, d.last)
    s += mask_str(d.mask)
    if d.array is not None:
        s += ", ARRAY(%d)" % d.array
    if d.local:
        s += ", LOCAL"
    if d.semantic:
        s += ", " + d.semantic
        if d.sem_index or d.semantic in ("GENERIC", "TEXCOORD"):
            s += "[%d]" % d.sem_index
    if d.file == "IMAGE":
        s += ", %s, %s" % (d.target, d.fmt)
        if d.wr:
            s += ", WR"
        if d.raw:
            s += ", RAW"
    if d.file in ("SVIEW", "RES") and d.target:
        s += ", " + d.target
        if d.rtype:
            s += ", " + d.rtype
        if d.raw:
            s += ", RAW"
        if d.wr:
            s += ", WR"
    if d.file == "BUFFER" and d.atomic:
        s += ", ATOMIC"
    if d.file == "MEMORY":
        s += ", " + d.memtype
    if d.interp:
        s += ", " + d.interp
        if d.location:
            s += ", " + d.location
    if d.invariant:
        s += ", INVARIANT"
    return s


class Imm:
    pass


def parse_imm(line, n):
    m = re.fullmatch(r"IMM\[(\d+)\] (FLT32|UINT32|INT32|FLT64|UINT64|INT64) \{(.*)\}", line)
    if not m:
        raise CheckError("bad immediate")
    if int(m.group(1)) != n or m.group(1) != str(n):
        raise CheckError("immediate index must be %d" % n)
    im = Imm()
    im.type = m.group(2)
    vals = m.group(3).split(", ")
    want = 2 if im.type.endswith("64") else 4
    if len(vals) != want:
        raise CheckError("%s immediates take %d values" % (im.type, want))
    out = []
    for v in vals:
        if im.type == "FLT32":
            if not re.fullmatch(r" *-?\d+\.\d{4}", v):
                raise CheckError("FLT32 value %r is not %%10.4f" % v)
            canon, exact = fmt_flt32(v)
            if canon != v:
                raise CheckError("FLT32 value %r prints as %r" % (v, canon))
            if not exact:
                raise CheckError("FLT32 value %r is not exactly representable" % v.strip())
            out.append(canon)
        elif im.type == "FLT64":
            x = float(v)
            canon = "%10.8f" % x
            if canon != v or Decimal(x) != Decimal(v.strip()):
                raise CheckError("FLT64 value %r not canonical/exact" % v)
            out.append(canon)
        elif im.type in ("UINT32", "UINT64"):
            bits = 32 if im.type == "UINT32" else 64
            if not re.fullmatch(r"\d+", v) or str(int(v)) != v or int(v) >= 1 << bits:
                raise CheckError("bad %s value %r" % (im.type, v))
            out.append(v)
        else:
            bits = 32 if im.type == "INT32" else 64
            if not re.fullmatch(r"-?\d+", v) or str(int(v)) != v or not (
                    -(1 << (bits - 1)) <= int(v) < 1 << (bits - 1)):
                raise CheckError("bad %s value %r" % (im.type, v))
            out.append(v)
    im.values = out
    im.text = "IMM[%d] %s {%s}" % (n, im.type, ", ".join(out))
    return im


class Insn:
    pass


def split_operands(text):
    return text.split(", ") if text else []


def parse_insn(body, legacy_ok):
    ins = Insn()
    m = re.match(r"^([A-Z0-9_]+)(.*)$", body)
    if not m:
        raise CheckError("bad instruction")
    word = m.group(1)
    ins.sat = ins.precise = False
    name = word
    op = CURRENT_OPS.get(name) or (LEGACY_OPS.get(name) if legacy_ok else None)
    if op is None:
        for suffix, attrs in (("_SAT_PRECISE", (True, True)), ("_PRECISE", (False, True)),
                              ("_SAT", (True, False))):
            if word.endswith(suffix):
                base = word[: -len(suffix)]
                op = CURRENT_OPS.get(base) or (LEGACY_OPS.get(base) if legacy_ok else None)
                if op:
                    name = base
                    ins.sat, ins.precise = attrs
                    break
    if op is None:
        if word in LEGACY_OPS:
            raise CheckError("legacy opcode %s outside legacy/" % word)
        raise CheckError("unknown opcode %r" % word)
    ins.name = name
    ins.op = op
    rest = m.group(2)
    ins.label = None
    ml = re.search(r" :(\d+)$", rest)
    if ml:
        if name not in LABEL_OPS:
            raise CheckError("%s takes no :label" % name)
        ins.label = int(ml.group(1))
        rest = rest[: ml.start()]
    if rest and not rest.startswith(" "):
        raise CheckError("expected space after opcode")
    parts = split_operands(rest[1:]) if rest else []
    if name == "BARRIER" and rest.startswith(", "):
        parts = split_operands(rest[2:])
        ins.dst, ins.src = [], []
    else:
        n = op.ndst + op.nsrc
        if len(parts) < n:
            raise CheckError("%s needs %d operands, got %d" % (name, n, len(parts)))
        ins.dst = [Dst(p) for p in parts[: op.ndst]]
        ins.src = [Src(p) for p in parts[op.ndst: n]]
        parts = parts[n:]
    ins.target = None
    ins.offsets = []
    if op.is_tex:
        if not parts or parts[0] not in TARGETS:
            raise CheckError("%s needs a texture target" % name)
        ins.target = parts.pop(0)
    if op.is_tex or op.tex_no_target or name in ("TXQ_LZ", "TEXLD", "TEXLDB", "TEXLDD"):
        while parts and re.fullmatch(r"[A-Z]+\[\d+\]\.[xyzw]{3}", parts[0]):
            ins.offsets.append(parts.pop(0))
        if len(ins.offsets) > 4:
            raise CheckError("at most 4 texture offsets")
    ins.qualifiers = []
    ins.mem_target = None
    ins.mem_format = None
    if parts:
        if name not in MEMORY_ITEM_OPS:
            raise CheckError("unexpected trailing operands %r" % parts)
        for p in parts:
            if p in QUALIFIERS:
                if ins.mem_target or ins.mem_format:
                    raise CheckError("qualifiers print before target/format")
                ins.qualifiers.append(p)
            elif p in TARGETS:
                if p == "BUFFER":
                    raise CheckError("memory target BUFFER is not printed")
                if ins.mem_format or ins.mem_target:
                    raise CheckError("target prints once, before the format")
                ins.mem_target = p
            elif p.startswith("PIPE_FORMAT_") and p[12:] in FORMATS and p != "PIPE_FORMAT_NONE":
                if ins.mem_format:
                    raise CheckError("one format only")
                ins.mem_format = p
            else:
                raise CheckError("bad memory item %r" % p)
        if ins.qualifiers != sorted(set(ins.qualifiers), key=QUALIFIERS.index):
            raise CheckError("qualifiers must be printed in bit order, once")
    return ins


def print_insn(ins):
    s = ins.name + ("_SAT" if ins.sat else "") + ("_PRECISE" if ins.precise else "")
    ops = [d.canonical() for d in ins.dst] + [x.canonical() for x in ins.src]
    if ins.target and ins.name not in SAMPLE_OPS:
        ops.append(ins.target)
    ops += ins.offsets
    ops += ins.qualifiers
    if ins.mem_target:
        ops.append(ins.mem_target)
    if ins.mem_format:
        ops.append(ins.mem_format)
    if ops:
        if ins.name == "BARRIER":
            s += ", " + ", ".join(ops)
        else:
            s += " " + ", ".join(ops)
    if ins.label is not None:
        s += " :%d" % ins.label
    return s


# ---------------------------------------------------------------------------
# Per-opcode channel reads
# ---------------------------------------------------------------------------

SCALAR_X = {"RCP", "RSQ", "SQRT", "EX2", "LG2", "SIN", "COS", "EXP", "LOG",
            "UP2H", "UP2US", "UP4B", "UP4UB", "IF", "UIF", "SWITCH", "CASE",
            "RCC", "RECIP", "RECIPSQRT", "EXPP", "LOGBASE2", "LOGP",
            "EXPBASE2", "SCS", "SINCOS", "BREAKC", "CALLNZ", "MEMBAR"}


def channels_read(ins, si):
    """Set of source channels (letters of the register) read by source si."""
    src = ins.src[si]
    swz = src.swz
    name = ins.name
    op = ins.op
    mask = ins.dst[0].mask if ins.dst else XYZW
    wide = any(t in WIDE_TYPES for t in op.src_types) or op.dst_type in WIDE_TYPES
    if name == "DFRACEXP":
        wide = True
    if wide:
        return set(swz)
    if name in SCALAR_X:
        return {swz[0]}
    if name in ("POW", "POWER"):
        return {swz[0]}
    if name in ("DP2", "PK2H", "PK2US"):
        return {swz[0], swz[1]}
    if name in ("DP2A", "DOT2ADD", "DP2ADD"):
        return {swz[0], swz[1]} if si < 2 else {swz[0]}
    if name in ("DP3", "DOT3", "XPD", "CRS", "CROSSPRODUCT", "NRM"):
        return {swz[0], swz[1], swz[2]}
    if name in ("DPH",):
        return {swz[0], swz[1], swz[2]} if si == 0 else set(swz)
    if name == "LIT":
        return {swz[0], swz[1], swz[3]}
    if name == "DST":
        return {swz[1], swz[2]} if si == 0 else {swz[1], swz[3]}
    if name in ("RFL",):
        return {swz[0], swz[1], swz[2]}
    if name == "X2D":
        return {swz[0], swz[1]} if si < 2 else set(swz)
    if name in ("SFL", "STR"):
        return set()
    if op.mode == "COMP" or name in ("SUB", "ABS", "CLAMP", "CND", "CND0",
                                       "NEGATE", "SAD", "SWZ", "LERP", "MADD",
                                       "SETLT", "SETGE", "FRAC", "FLOOR", "INT",
                                       "SGN", "DSX", "DSY", "MOVA", "SHR"):
        return {swz[XYZW.index(c)] for c in mask}
    # texture, memory and everything else: every letter of the swizzle.
    return set(swz)


# ---------------------------------------------------------------------------
# File check
# ---------------------------------------------------------------------------

class Result:
    def __init__(self, path):
        self.path = path
        self.errors = []
        self.warnings = []

    def err(self, lineno, msg):
        self.errors.append("%s:%d: error: %s" % (self.path, lineno, msg))

    def warn(self, lineno, msg):
        self.warnings.append("%s:%d: warning: %s" % (self.path, lineno, msg))


def check_file(path, coverage):
    res = Result(path)
    legacy_ok = (os.sep + "legacy" + os.sep) in path or path.startswith("legacy" + os.sep)
    with open(path, "rb") as f:
        raw = f.read()
    if b"\r" in raw:
        res.err(1, "CR in file")
        return res
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        res.err(1, "non-ASCII bytes")
        return res
    if not text.endswith("\n") or text.endswith("\n\n"):
        res.err(1, "file must end with exactly one LF")
    lines = text.split("\n")[:-1]
    if not lines:
        res.err(1, "empty file")
        return res
    proc = lines[0]
    if proc not in PROCESSORS:
        res.err(1, "bad header %r" % proc)
        return res

    printed = [proc]
    decls = []          # (lineno, Decl)
    imms = []
    insns = []          # (lineno, Insn)
    phase = 0           # 0 props, 1 decls, 2 imms, 3 insns
    level = 0
    last_decl_key = None
    last_prop = None
    for ln, line in enumerate(lines[1:], start=2):
        try:
            if line.startswith("PROPERTY "):
                if phase > 0:
                    res.err(ln, "PROPERTY after declarations/immediates/instructions")
                parts = line.split(" ")
                if len(parts) != 3 or parts[1] not in PROPERTIES:
                    raise CheckError("bad property line")
                kind = PROPERTIES[parts[1]]
                pidx = list(PROPERTIES).index(parts[1])
                if last_prop is not None and pidx <= last_prop:
                    res.warn(ln, "properties not in ureg (enum) order")
                last_prop = pidx
                if kind is int:
                    if not re.fullmatch(r"-?\d+", parts[2]) or str(int(parts[2])) != parts[2]:
                        raise CheckError("property value must be %d")
                elif parts[2] not in kind:
                    raise CheckError("bad value for %s" % parts[1])
                printed.append(line)
            elif line.startswith("DCL "):
                if phase > 1:
                    res.err(ln, "declaration after immediates/instructions")
                phase = 1
                d = parse_decl(line, proc)
                printed.append(print_decl(d, proc))
                decls.append((ln, d))
                key = (DECL_ORDER.index(d.file) if d.file in DECL_ORDER else 99,
                       d.dim or 0, d.first)
                if last_decl_key is not None and key < last_decl_key:
                    res.warn(ln, "declarations not in ureg order (IN SV OUT SAMP SVIEW IMAGE BUFFER MEMORY CONST HWATOMIC TEMP ADDR)")
                last_decl_key = key
            elif line.startswith("IMM"):
                if phase > 2:
                    res.err(ln, "immediate after instructions")
                phase = 2
                im = parse_imm(line, len(imms))
                printed.append(im.text)
                imms.append(im)
            else:
                phase = 3
                m = re.match(r"^( *\d+): (.*)$", line)
                if not m:
                    raise CheckError("bad instruction line")
                num = "%3d" % len(insns)
                if m.group(1) != num:
                    res.err(ln, "instruction number must be %r" % num)
                body = m.group(2)
                ins = parse_insn(body.lstrip(" "), legacy_ok)
                if ins.name in DEDENT_BEFORE:
                    level -= 1
                printed.append("%3d: %s%s" % (len(insns), "  " * max(level, 0), print_insn(ins)))
                if ins.name in INDENT_AFTER:
                    level += 1
                insns.append((ln, ins))
        except CheckError as e:
            res.err(ln, str(e))
            printed.append(line)
            if line.startswith("IMM"):
                imms.append(None)
            elif phase == 3:
                insns.append((ln, None))
    if level != 0:
        res.err(len(lines), "unbalanced IF/LOOP/SUB nesting")
    for ln, (a, b) in enumerate(zip(lines, printed), start=1):
        if a != b:
            res.err(ln, "not canonical:\n    have: %r\n    want: %r" % (a, b))
    if res.errors:
        return res
    semantic_checks(res, proc, decls, imms, insns, legacy_ok, coverage)
    return res


def semantic_checks(res, proc, decls, imms, insns, legacy_ok, coverage):
    declared = {}
    arrays = {}       # (file, id) -> (first, last)
    written = {}      # (file, idx) -> set of channels
    used = set()      # (decl lineno)
    out_mask = {}
    in_mask = {}
    for ln, d in decls:
        for i in range(d.first, d.last + 1):
            key = (d.file, d.dim, i)
            if key in declared:
                res.err(ln, "%s[%d] declared twice" % (d.file, i))
            declared[key] = (ln, d)
            if d.file == "OUT":
                out_mask[i] = (ln, d.mask)
            if d.file == "IN":
                in_mask[i] = d.mask
        if d.array is not None:
            arrays[(d.file, d.array)] = (d.first, d.last)

    def lookup(reg, ln, what):
        f = reg.file
        if f == "IMM":
            idx = reg.index
            if idx.indirect is None and idx.value >= len(imms):
                res.err(ln, "IMM[%d] does not exist" % idx.value)
            imm_used.add(idx.value)
            return []
        if f == "NULL":
            return []
        dim = None
        any_dim = False
        if reg.dim is not None:
            if reg.dim.indirect is not None:
                # indirect dimension: any declared buffer at or above the base
                dims = sorted({k[1] for k in declared if k[0] == f and k[1] is not None
                               and k[1] >= reg.dim.value})
                any_dim = True
            else:
                dims = [reg.dim.value]
        else:
            dims = [None]
        idx = reg.index
        found = []
        if any_dim and idx.indirect is None:
            keys = [(f, dm, idx.value) for dm in dims if (f, dm, idx.value) in declared]
            if not keys:
                res.err(ln, "%s %s is not declared in any buffer" % (what, reg.canonical()))
            dims = []
            found += keys
        for dm in dims:
            if idx.indirect is None:
                key = (f, dm, idx.value)
                if key not in declared:
                    res.err(ln, "%s %s is not declared" % (what, reg.canonical()))
                else:
                    found.append(key)
            else:
                if idx.array_id:
                    rng = arrays.get((f, idx.array_id))
                    if rng is None:
                        res.err(ln, "%s: no ARRAY(%d) in file %s" % (reg.canonical(), idx.array_id, f))
                        continue
                    if not (rng[0] <= idx.value <= rng[1]):
                        res.err(ln, "%s: base offset outside ARRAY(%d) %d..%d" % (reg.canonical(), idx.array_id, rng[0], rng[1]))
                    found += [(f, dm, i) for i in range(rng[0], rng[1] + 1)]
                else:
                    key = (f, dm, idx.value)
                    if key not in declared:
                        res.err(ln, "%s: indirect base %d not declared" % (reg.canonical(), idx.value))
                        continue
                    dln, d = declared[key]
                    found += [(f, dm, i) for i in range(d.first, d.last + 1)]
                    if f == "TEMP" and d.array is None:
                        res.warn(ln, "indirect TEMP access without ARRAY declaration")
        for key in found:
            used.add(declared[key][0])
            if f == "SAMP" and ("SVIEW", None, key[2]) in declared:
                # TEX-style opcodes imply the sampler view of the same index.
                used.add(declared[("SVIEW", None, key[2])][0])
        for ix in reg.indices:
            if ix.indirect is not None:
                af, ai, ac = ix.indirect
                akey = (af, None, ai)
                if akey not in declared:
                    res.err(ln, "address register %s[%d] not declared" % (af, ai))
                else:
                    used.add(declared[akey][0])
                    if af in ("ADDR", "TEMP") and ac not in written.get((af, ai), set()):
                        res.err(ln, "%s[%d].%s read before written" % (af, ai, ac))
        return found

    imm_used = set()
    end_seen = None
    in_sub = False
    ops_used = set()
    for n, (ln, ins) in enumerate(insns):
        op = ins.op
        ops_used.add(ins.name)
        stages = op.stages
        stage = {"VERT": "VS", "FRAG": "FS", "COMP": "CS"}.get(proc, proc)
        if stages.startswith("FS") and stage != "FS":
            res.err(ln, "%s is FS-only" % ins.name)
        if ins.name == "BARRIER" and stage not in ("CS",):
            res.err(ln, "BARRIER outside compute")
        if ins.name in IMPLICIT_LOD and stage != "FS":
            res.err(ln, "%s needs implicit derivatives (FS only)" % ins.name)
        if end_seen is not None:
            if ins.name == "BGNSUB":
                in_sub = True
            elif ins.name == "ENDSUB":
                in_sub = False
            elif not in_sub:
                res.err(ln, "only subroutine bodies may follow END")
        if ins.name == "END":
            if end_seen is not None:
                res.err(ln, "second END")
            end_seen = n
        # sources
        for si, s in enumerate(ins.src):
            keys = lookup(s.reg, ln, "source")
            if s.reg.file in ("TEMP", "ADDR"):
                chans = channels_read(ins, si)
                for key in keys:
                    have = written.get((key[0], key[2]), set())
                    missing = chans - have
                    if missing:
                        res.err(ln, "%s[%d].%s read before any write" % (
                            key[0], key[2], "".join(c for c in XYZW if c in missing)))
                        break
            if s.reg.file == "IN" and s.reg.index.indirect is None and proc == "FRAG":
                m = in_mask.get(s.reg.index.value, XYZW)
                chans = channels_read(ins, si)
                if chans - set(m):
                    res.err(ln, "reads IN[%d] channels outside its usage mask" % s.reg.index.value)
            if s.reg.file == "IMM" and s.reg.index.indirect is None and s.reg.index.value < len(imms):
                it = imms[s.reg.index.value].type
                types = op.src_types
                t = types[si] if si < len(types) else "untyped"
                if t == "float" and it in ("UINT32", "INT32"):
                    res.warn(ln, "integer immediate feeds float operand of %s" % ins.name)
                if t in ("int", "uint") and it == "FLT32" and ins.name not in ("AND", "OR", "XOR", "UCMP"):
                    res.warn(ln, "FLT32 immediate feeds integer operand of %s" % ins.name)
            if (s.neg or s.abs) and s.reg.file in ("SAMP", "SVIEW", "BUFFER", "IMAGE", "MEMORY"):
                res.err(ln, "modifier on a resource operand")
        for off in ins.offsets:
            r = Register(off[:-4]) if off[-4] == "." else Register(off)
            lookup(r, ln, "offset")
        # BUFFER/MEMORY LOAD/STORE: channel c accesses byte address + 4c, so a
        # mask that does not start at x is almost always a mistake.
        if ins.name in ("LOAD", "STORE") and ins.dst:
            r = ins.src[0].reg if ins.name == "LOAD" else ins.dst[0].reg
            if r.file in ("BUFFER", "MEMORY") and ins.dst[0].mask not in ("x", "xy", "xyz", "xyzw"):
                res.warn(ln, "%s mask .%s does not start at x (channel c is address + 4c)" % (ins.name, ins.dst[0].mask))
        # a call writes whatever the subroutine body writes
        if ins.name in ("CAL", "CALL") and ins.label is not None:
            j = ins.label
            if j < len(insns) and insns[j][1].name == "BGNSUB":
                j += 1
                while j < len(insns) and insns[j][1].name != "ENDSUB":
                    for d in insns[j][1].dst:
                        if d.reg.file in ("TEMP", "ADDR", "OUT") and d.reg.index.indirect is None:
                            written.setdefault((d.reg.file, d.reg.index.value), set()).update(d.mask)
                    j += 1
            else:
                res.err(ln, "call target %d is not a BGNSUB" % ins.label)
        # destinations
        for d in ins.dst:
            keys = lookup(d.reg, ln, "destination")
            for key in keys:
                written.setdefault((key[0], key[2]), set()).update(d.mask)
            if d.reg.file == "IMM" or d.reg.file == "CONST" or d.reg.file == "IN":
                res.err(ln, "write to read-only file %s" % d.reg.file)
    if end_seen is None:
        res.err(insns[-1][0] if insns else 1, "no END")
    for i, (ln, mask) in out_mask.items():
        have = written.get(("OUT", i), set())
        if set(mask) - have:
            res.err(ln, "OUT[%d] channels %s never written" % (i, "".join(c for c in XYZW if c in set(mask) - have)))
    for ln, d in decls:
        if ln not in used:
            res.warn(ln, "%s declared but never used" % print_decl(d, proc))
    for i in range(len(imms)):
        if i not in imm_used:
            res.warn(1, "IMM[%d] is never used" % i)
    coverage.update(ops_used)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    show_cov = "--coverage" in argv
    werror = "--warnings-as-errors" in argv
    paths = args or [os.path.join(ROOT, "tgsi-samples")]
    files = []
    for p in paths:
        if os.path.isdir(p):
            for dp, _, fns in os.walk(p):
                files += [os.path.join(dp, f) for f in fns if f.endswith(".tgsi")]
        else:
            files.append(p)
    files.sort()
    nerr = nwarn = 0
    failed = 0
    coverage = set()
    for f in files:
        rel = os.path.relpath(f, ROOT) if f.startswith(ROOT) else f
        r = check_file(rel if os.path.exists(rel) else f, coverage)
        for e in r.errors:
            print(e)
        for w in r.warnings:
            print(w)
        nerr += len(r.errors)
        nwarn += len(r.warnings)
        if r.errors or (werror and r.warnings):
            failed += 1
    if show_cov:
        cur = sorted(CURRENT_OPS)
        missing = [o for o in cur if o not in coverage]
        print("current opcodes covered: %d of %d" % (len(cur) - len(missing), len(cur)))
        print("not covered: " + " ".join(missing))
        leg = sorted(o for o in coverage if o in LEGACY_OPS and o not in CURRENT_OPS)
        print("legacy opcodes used: %d: %s" % (len(leg), " ".join(leg)))
        lmiss = sorted(o for o in LEGACY_OPS if o not in coverage)
        print("legacy opcodes not used: " + " ".join(lmiss))
    print("%d files, %d passed, %d failed, %d errors, %d warnings" % (
        len(files), len(files) - failed, failed, nerr, nwarn))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
