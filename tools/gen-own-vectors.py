#!/usr/bin/env python3
"""Generate tests/isa/own-cases.txt: encoding vectors for every Valhall instruction.

An independent oracle for the Rust encoder/decoder/assembler/disassembler: the words and texts
are computed here straight from the rows of Appendix A of the encoding specification (a copy is
kept in tests/isa/appendix-a.md) with hand-written rules (slot bytes, staging bytes and counts,
modifier fields, printing rules of spec §4.3/§4.4.4/§6.2). Nothing is shared with the Rust code
or with isa/valhall.isa. Values are drawn from a seeded PRNG, so the output is reproducible.

Run from the repository root:   python3 tools/gen-own-vectors.py > tests/isa/own-cases.txt

Deliberately avoided (documented in docs/valhall.md, Appendix B items 7 and 8): reserved values,
nan_mode `none`, the gradient `lod_mode` flags, varying widths `16.32`/`32.32`, special values
on 64-bit widen sources (their `.w0` reads back as a widen). TEX_DUAL cannot
be assembled at all (its two register widths are ambiguous); its lines are disassembly-only.
"""
import random
import re
import sys

R = None
def rng(prefix, n): return [f"{prefix}{i}" for i in range(n)]
ENUM_LIST = [
 ("flow", "Flow control: dependency waits and control actions applied after the instruction",
   ["none","wait0","wait1","wait01","wait2","wait02","wait12","wait012","wait0126","wait","reconverge",R,R,"discard",R,"end"], "none"),
 ("fau_special_page_0", "Special FAU values of page 0", [R,R,"warp_id",R,"framebuffer_size","atest_datum","sample",R]+rng("blend_descriptor_",8), None),
 ("fau_special_page_1", "Special FAU values of page 1", [R,"thread_local_pointer",R,"workgroup_local_pointer",R,R,R,"resource_table_pointer"]+[R]*8, None),
 ("fau_special_page_3", "Special FAU values of page 3", [R,"lane_id",R,"core_id"]+[R]*11+["program_counter"], None),
 ("swizzles_8_bit", "Byte permutations of a 32-bit register holding four 8-bit lanes",
   ["b0123","b3210","b0101","b2323","b0000","b1111","b2222","b3333","b2301","b1032","b0011","b2233",R,R,R,R], "b0123"),
 ("lanes_8_bit", "Byte replicated into both halves of a shift amount or lane index", [R,R,R,R,"b00","b11","b22","b33"]+[R]*8, None),
 ("half_swizzles_8_bit", "Two bytes of a register picked as the two 16-bit lanes of a conversion",
   ["b00","b10","b20","b30","b01","b11","b21","b31","b02","b12","b22","b32","b03","b13","b23","b33"], None),
 ("swizzles_16_bit", "Half-word (or byte) selection for a source holding two 16-bit lanes",
   ["h00","h10","h01","h11","b00","b20","b02","b22","b11","b31","b13","b33","b01","b23",R,R], "h01"),
 ("swizzles_32_bit", "Widening of a 16- or 8-bit part of a register to a 32-bit operand",
   ["none",R,"h0","h1","b0","b1","b2","b3"], "none"),
 ("swizzles_64_bit", "Widening of a part of a register to a 64-bit operand",
   ["none",R,"h0","h1","b0","b1","b2","b3","w0",R,R,R,R,R,R,R], "none"),
 ("lane_8_bit", "One byte of a 32-bit register", ["b0","b1","b2","b3"], None),
 ("lane_16_bit", "One half of a 32-bit register", ["h0","h1"], None),
 ("combine", "How a branch condition is formed from the source", ["none","h0","h1","and","lowbits"], "none"),
 ("load_lane_8_bit", "Where a loaded byte lands in the destination", ["b0","b1","b2","b3","h0","h1","w0","d0"], "b0"),
 ("load_lane_16_bit", "Where a loaded half-word lands in the destination", ["h0","h1","w0","d0",R,R,R,R], "h0"),
 ("load_lane_24_bit", "Where a loaded 24-bit value lands in the destination", ["identity",R,R,R,R,R,R], "identity"),
 ("load_lane_32_bit", "Where a loaded word lands in the destination", ["w0","d0",R,R,R,R,R,R], "w0"),
 ("load_lane_48_bit", "Placement of a loaded 48-bit value", [R,R,R,R,"identity",R,R,R], "identity"),
 ("load_lane_64_bit", "Placement of a loaded 64-bit value", [R,R,R,R,R,R,R,"identity"], "identity"),
 ("load_lane_96_bit", "Placement of a loaded 96-bit value", [R,R,R,R,R,R,"identity",R], "identity"),
 ("load_lane_128_bit", "Placement of a loaded 128-bit value", [R,R,R,R,R,R,R,"identity"], "identity"),
 ("round_mode", "Rounding of the result", ["rte","rtp","rtn","rtz"], "rte"),
 ("result_type", "What a true comparison returns", ["i1","f1","m1","u1"], None),
 ("widen", "Half of a 32-bit source converted or extended to 32 bits", ["none","h0","h1",R,R,R,R,R], "none"),
 ("clamp", "Clamp applied to a floating-point result", ["none","clamp_0_inf","clamp_m1_1","clamp_0_1"], "none"),
 ("condition", "Comparison predicate, interpreted with the instruction's type", ["eq","gt","ge","ne","lt","le","gtlt","total"], None),
 ("dimension", "Texture dimensionality", ["1d","2d","3d","cube"], None),
 ("lod_mode", "How the texture level of detail is chosen", ["zero","computed",R,R,"explicit","computed_bias","grdesc",R], None),
 ("register_format", "Register format of converted loads and stores", ["auto",R,"f32","f16","s32","s16","u32","u16"], None),
 ("staging_register_count", "Number of staging registers read or written", rng("sr",8), None),
 ("staging_register_write_count", "Number of staging registers written, minus one", [f"write{i}" for i in range(1,9)], None),
 ("write_mask", "Texture components written to the result registers",
   [R,"r","g","rg","b","rb","gb","rgb","a","ra","ga","rga","ba","rba","gba","rgba"], "rgba"),
 ("fetch_component", "Component gathered by a four-texel gather", ["gather4_r","gather4_g","gather4_b","gather4_a"], None),
 ("register_type", "Type of the texture result registers", [R,"f","u","s"], None),
 ("register_width", "Width of each texture result register", ["16","32"], None),
 ("varying_texture_register_width", "Result register widths of a fused varying and texture fetch", ["16","32","16.32","32.32"], None),
 ("vector_size", "Number of components transferred", ["none","v2","v3","v4"], "none"),
 ("slot", "Dependency slot signalled when the asynchronous operation completes", ["slot0","slot1","slot2",R,R,R,R,"slot7"], None),
 ("memory_access", "Memory access hint (stream or forced access)", ["none","istream","estream","force"], "none"),
 ("subgroup_size", "Number of lanes that take part in a cross-lane operation", ["subgroup2","subgroup4","subgroup8","subgroup16"], "subgroup16"),
 ("lane_operation", "How the lane index of a cross-lane read is formed", ["none","xor","accumulate","shift"], "none"),
 ("inactive_result", "Value returned when the lane read is inactive",
   ["zero","umax","i1","v2i1","smin","smax","v2smin","v2smax","v4smin","v4smax","f1","v2f1","infn","inf","v2infn","v2inf"], "zero"),
 ("mux", "Selection rule of a multiplex", ["neg","int_zero","fp_zero","bit"], "int_zero"),
 ("sample_mode", "Where a varying is interpolated", ["center","centroid","sample","explicit"], None),
 ("update_mode", "What a varying load does with the saved interpolation position", ["store","retrieve",R,"clobber"], None),
 ("sample_and_update_mode", "Permitted interpolation/update pairs of a fused varying and texture fetch",
   ["center_store","centroid_store","sample_store","explicit_store","center_clobber",R,"sample_clobber","retrieve"], None),
 ("source_format", "In-memory format of a hardware varying", ["src_flat32","src_flat16","src_f32","src_f16"], None),
 ("atomic_operation", "Operation of a read-modify-write atomic",
   [R,R,"aadd",R,R,R,R,R,"asmin","asmax","aumin","aumax","aand","aor","axor","axchg"], None),
 ("atomic_operation_with_1", "Operation of an atomic whose second operand is the constant 1", ["ainc","adec","aumax1","asmax1","aor1"], None),
 ("nan_mode", "NaN handling of a flush", ["none","flush_nan","quiet_nan"], None),
]
IMMS = [(0x00000000,"zero"),(0xFFFFFFFF,"all ones, integer -1"),(0x7FFFFFFF,"largest signed integer, float NaN"),
 (0xFAFCFDFE,"bytes -2, -3, -4, -6"),(0x01000000,"16-bit 256 in the high half"),(0x80002000,"bytes 0, 32, 0, 128"),
 (0x70605030,"bytes 48, 80, 96, 112"),(0xC0B0A090,"bytes 144, 160, 176, 192"),(0x03020100,"bytes 0, 1, 2, 3"),
 (0x07060504,"bytes 4, 5, 6, 7"),(0x0B0A0908,"bytes 8, 9, 10, 11"),(0x0F0E0D0C,"bytes 12, 13, 14, 15"),
 (0x13121110,"bytes 16, 17, 18, 19"),(0x17161514,"bytes 20, 21, 22, 23"),(0x1B1A1918,"bytes 24, 25, 26, 27"),
 (0x1F1E1D1C,"bytes 28, 29, 30, 31"),(0x3F800000,"f32 1.0"),(0x3DCCCCCD,"f32 0.1"),(0x3EA2F983,"f32 1/pi"),
 (0x3F317218,"f32 ln 2"),(0x40490FDB,"f32 pi"),(0x00000000,"f32 0.0 (second zero entry)"),(0x477FFF00,"f32 65535.0"),
 (0x5C005BF8,"f16 pair 255.0, 256.0"),(0x2E660000,"f16 0.1 in the high half"),(0x34000000,"f16 0.25 in the high half"),
 (0x38000000,"f16 0.5 in the high half"),(0x3C000000,"f16 1.0 in the high half"),(0x40000000,"f16 2.0 in the high half"),
 (0x44000000,"f16 4.0 in the high half"),(0x48000000,"f16 8.0 in the high half"),(0x42480000,"f16 pi in the high half")]

ENUMS = {k: (vals, default) for k, _, vals, default in ENUM_LIST}
FLOW = ENUMS["flow"][0]
SPECIALS = [  # (name, page, entry)
    ("atest_datum", 0, 5), ("blend_descriptor_3", 0, 11), ("sample", 0, 6), ("framebuffer_size", 0, 4),
    ("thread_local_pointer", 1, 1), ("workgroup_local_pointer", 1, 3), ("resource_table_pointer", 1, 7),
    ("lane_id", 3, 1), ("core_id", 3, 3), ("program_counter", 3, 15), ("warp_id", 0, 2),
]
FIRST_IMM = {}
for i, (v, _) in enumerate(IMMS):
    FIRST_IMM.setdefault(v, i)


def rng_bits(s):
    a, _, b = s.partition("..")
    return int(a), int(b or a)


def parse_rows(path):
    rows = []
    for line in open(path):
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append(dict(name=cells[0].strip("`"), opcode=int(cells[1], 16), sec=cells[2], unit=cells[3],
                         ops=[] if cells[4] == "—" else cells[4].split("; "),
                         mods=[] if cells[5] == "—" else cells[5].split(", ")))
    return rows


def valid(enum):
    vals, _ = ENUMS[enum]
    return [i for i, v in enumerate(vals) if v is not None]


def pick_enum(rand, enum, avoid=()):
    choices = [i for i in valid(enum) if ENUMS[enum][0][i] not in avoid]
    return rand.choice(choices)


def show(enum, idx):
    """Printed suffix of an enum field ("" for the default)."""
    vals, default = ENUMS[enum]
    if default is not None and vals[idx] == default:
        return ""
    return "." + (vals[idx] if idx < len(vals) and vals[idx] is not None else "reserved")


def vector(row, rand):
    name = row["name"]
    alu = row["unit"] in ("FMA", "CVT", "SFU")
    w = row["opcode"] << 48
    if row["sec"] != "—":
        m = re.match(r"(\d+) @(\d+)/", row["sec"])
        w |= int(m.group(1)) << int(m.group(2))
    texts = []
    fau = rand.choice(["none", "uniform", "imm", "special"])
    fau_used = False
    page = 0
    has_dest = any(op == "D" for op in row["ops"])
    has_sr = any(op.startswith("@") for op in row["ops"])
    if not has_dest and not has_sr:
        w |= 0xC0 << 40
    for op in row["ops"]:
        if op.startswith("@"):
            m = re.match(r"@([WR]) (\d+)\.\.(\d+) c(\d\d) (n-1|n)@(\d+)\.\.(\d+)$", op)
            rw, a, b, ctl, kind, ca, cb = m.groups()
            count = rand.randint(1, 4) if kind == "n-1" else rand.randint(0, 4)
            base = 0 if count == 0 else rand.randrange(0, 60, 2) if count > 1 else rand.randrange(0, 64)
            w |= base << int(a)
            w |= int(ctl, 2) << (int(b) + 1)
            w |= (count - 1 if kind == "n-1" else count) << int(ca)
            texts.append("@" + ":".join(f"r{base + i}" for i in range(count)))
        elif op == "D":
            reg = rand.randrange(64)
            mask = rand.choice([3, 3, 1, 2])
            w |= (reg | mask << 6) << 40
            texts.append(f"r{reg}" + {3: "", 1: ".h0", 2: ".h1"}[mask])
        elif op.startswith("S"):
            parts = op.split(" ")
            slot, size = map(int, re.match(r"S(\d):(\d+)$", parts[0]).groups())
            attrs = parts[1:]
            # base
            kind = "reg"
            # A special value on a 64-bit widen source cannot round-trip: its `.w0` reads as the
            # widen value `w0` (spec §4.4.3 rule 3), so those are left out.
            wide64 = any(a.endswith("(sw64)") for a in attrs)
            if not fau_used and fau != "none" and not (fau == "special" and wide64) and rand.random() < 0.6:
                kind = fau
                fau_used = True
            if kind == "reg":
                r = rand.randrange(64)
                last = rand.random() < 0.3
                byte = r | (0x40 if last else 0)
                text = ("^" if last else "") + f"r{r}"
            elif kind == "uniform":
                u = rand.randrange(128)
                page = u >> 6
                byte = 0x80 | (u & 63)
                text = f"u{u}"
            elif kind == "imm":
                value = rand.choice(IMMS)[0]
                byte = 0xC0 | FIRST_IMM[value]
                text = f"0x{value:X}"
            else:
                sname, page, entry = rand.choice(SPECIALS)
                hi = rand.randrange(2)
                byte = 0xE0 | entry << 1 | hi
                text = f"{sname}.w{hi}"
            w |= byte << (8 * slot)
            neg = abs_ = notb = False
            suffix_swz = suffix_wid = suffix_lane = ""
            for at in attrs:
                m = re.match(r"(neg|abs|not)(\d+)$", at)
                if m:
                    if rand.random() < 0.4:
                        w |= 1 << int(m.group(2))
                        if m.group(1) == "neg": neg = True
                        elif m.group(1) == "abs": abs_ = True
                        else: notb = True
                    continue
                if at == "float":
                    continue
                m = re.match(r"(swz|wid|lanes|hsw|comb|lane)(\d+)\.\.(\d+)(?:\((\w+)\))?$", at)
                k, lo, hi_, e = m.groups()
                lo = int(lo)
                if k == "swz":
                    enum = "widen" if e == "widen" else "swizzles_16_bit"
                    idx = rand.choice([0, 1, 2] if enum == "widen" else [0, 1, 2, 3])
                    w |= idx << lo
                    suffix_swz = show(enum, idx)
                elif k == "wid":
                    enum = f"swizzles_{e[2:]}_bit"
                    idx = pick_enum(rand, enum)
                    w |= idx << lo
                    suffix_wid = show(enum, idx)
                elif k == "lanes":
                    idx = pick_enum(rand, "lanes_8_bit")
                    w |= idx << lo
                    suffix_wid = show("lanes_8_bit", idx)
                elif k == "hsw":
                    idx = pick_enum(rand, "half_swizzles_8_bit")
                    w |= idx << lo
                    suffix_wid = show("half_swizzles_8_bit", idx)
                elif k == "comb":
                    idx = pick_enum(rand, "combine")
                    w |= idx << lo
                    suffix_wid = show("combine", idx)
                else:
                    enum = "lane_8_bit" if e == "l8" else "lane_16_bit"
                    idx = pick_enum(rand, enum)
                    w |= idx << lo
                    suffix_lane = show(enum, idx)
            text += (".neg" if neg else "") + (".abs" if abs_ else "") + suffix_swz + suffix_wid + suffix_lane + (".not" if notb else "")
            texts.append(text)
        else:
            m = re.match(r"(#|\w+):(\d+)\.\.(\d+)( signed)?$", op)
            iname, a, b, signed = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
            width = b - a + 1
            if signed:
                value = rand.randint(-(1 << (width - 1)), (1 << (width - 1)) - 1)
                w |= (value & ((1 << width) - 1)) << a
                texts.append(f"{iname}:{value}")
            else:
                value = rand.randrange(1 << width)
                w |= value << a
                texts.append(f"#0x{value:X}" if iname == "#" else f"{iname}:0x{value:X}")
    mtext = ""
    for md in row["mods"]:
        m = re.match(r"(\w+) (\d+)(?:\.\.(\d+))?(?: \((?:req|def \w+)\))?$", md)
        key, lo, hi_ = m.group(1), int(m.group(2)), m.group(3)
        width = (int(hi_) if hi_ else lo) - lo + 1
        enum = "register_width" if key == "secondary_register_width" else key
        if enum in ENUMS and not (key == "lod_mode" and width == 1):
            avoid = ("none",) if key == "nan_mode" else ("16.32", "32.32") if key == "varying_texture_register_width" else ()
            idx = pick_enum(rand, enum, avoid)
            w |= idx << lo
            mtext += show(enum, idx)
        elif key == "lod_mode":
            continue  # the gradient flags cannot be assembled (Appendix B item 8)
        else:
            if rand.random() < 0.5:
                w |= 1 << lo
                mtext += "." + key
    flow = rand.choice([i for i, f in enumerate(FLOW) if f is not None])
    w |= flow << 59
    w |= page << 57
    if flow:
        mtext += "." + FLOW[flow]
    text = name + mtext + " " + ", ".join(texts)
    return w, text


def main():
    rows = parse_rows(sys.argv[1] if len(sys.argv) > 1 else "tests/isa/appendix-a.md")
    rand = random.Random(20250)
    print("# Own encoding vectors: two per instruction, generated by tools/gen-own-vectors.py from")
    print("# tests/isa/appendix-a.md (independently of the Rust code). Same format as assembler-cases.txt.")
    for row in rows:
        for _ in range(2):
            w, text = vector(row, rand)
            print(" ".join(f"{(w >> (8 * k)) & 0xFF:02x}" for k in range(8)) + "    " + text)


if __name__ == "__main__":
    main()
