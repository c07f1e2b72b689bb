#!/usr/bin/env python3
"""Generate src/tgsi/opcodes_table.rs from tools/tgsi-opcodes.csv.

The CSV is the project's list of every TGSI opcode name any Mesa release knew
(docs/tgsi-text-format.md, Appendix B explains the columns). Run from the
repository root:  python3 tools/gen-tgsi-opcodes.py
A unit test (tgsi::opcodes::tests::table_matches_csv) re-reads the CSV and
fails if the generated table is stale.
"""
import csv
import re
import sys

# Unused opcode numbers that Mesa's printer names UNKnnn and its parser
# accepts as zero-operand opcodes (tgsi-text-format.md §3.5 rule 2).
GAPS = [67, 81, 82, 93, 113, 114, 115, 165, 212]

# Names used twice in the CSV: the current opcode keeps the plain variant.
DUPLICATE_VARIANTS = {("LOAD", "removed"): "LoadLegacy", ("ENDLOOP", "removed"): "EndloopLegacy"}

TYPES = {"float": "F", "int": "I", "uint": "U", "double": "D", "int64": "I64", "uint64": "U64",
         "untyped": "X", "resource": "Res", "sview": "Sview", "sampler": "Samp"}
MODES = {"componentwise": "Componentwise", "replicated-scalar": "ReplicatedScalar",
         "special (channel-dependent)": "ChannelDependent", "special (other)": "Other", "none": "None"}
FLOWS = {"": None, "kill": "Kill", "call": "Call", "return": "Return", "if": "If", "else": "Else",
         "endif": "EndIf", "break": "Break", "continue": "Continue", "emit": "Emit",
         "loop-begin": "LoopBegin", "loop-end": "LoopEnd", "sub-begin": "SubBegin", "sub-end": "SubEnd",
         "barrier": "Barrier", "end": "End", "switch": "Switch", "case": "Case", "default": "Default",
         "endswitch": "EndSwitch", "branch": "Branch"}
STAGES = {"all": "ALL", "FS": "FS", "GS": "GS", "CS, TCS": "CS_TCS",
          "all (implicit-LOD forms are only well defined in FS)": "ALL"}


def variant(name, status):
    if (name, status) in DUPLICATE_VARIANTS:
        return DUPLICATE_VARIANTS[(name, status)]
    return "".join(p[:1].upper() + p[1:].lower() for p in name.split("_"))


def rust_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def types(field):
    if not field:
        return "&[]"
    return "&[" + ", ".join("T::" + TYPES[t] for t in field.split(",")) + "]"


def main():
    rows = list(csv.DictReader(open("tools/tgsi-opcodes.csv", newline="")))
    entries = []
    for r in rows:
        mode = r["output_mode"]
        inferred = mode.endswith(" (inferred)")
        mode = mode.removesuffix(" (inferred)")
        number = r["last_opcode_number"]
        entries.append(dict(
            variant=variant(r["name"], r["status"]), name=r["name"],
            status={"current": "Current", "removed": "Removed", "alias": "Alias"}[r["status"]],
            number=int(number), introduced=r["introduced_in"], removed=r["removed_in"],
            num_dst=int(r["num_dst"] or 0), num_src=int(r["num_src"] or 0),
            mode=MODES[mode], inferred=inferred,
            src=types(r["src_types"]), dst=types(r["dst_type"]),
            is_texture=r["is_texture"] == "1",
            offsets=r["is_texture"] == "1" or r["texture_bit_without_target"] == "1",
            memory=r["memory_qualifier_list"] == "1",
            label=r["is_branch_label"] == "1",
            flow=FLOWS[r["flow"]], indent=r["indent"], stages=STAGES[r["stages"]],
            implicit_lod="implicit-LOD" in r["stages"],
            operands=r["text_operands"], recipe=r["replacement_or_canonical"],
            semantics=r["semantics"]))
    for n in GAPS:
        entries.append(dict(
            variant=f"Unk{n}", name=f"UNK{n}", status="Gap", number=n, introduced="17.3",
            removed="", num_dst=0, num_src=0, mode="None", inferred=False, src="&[]", dst="&[]",
            is_texture=False, offsets=False, memory=(161 <= n <= 176), label=False, flow=None,
            indent="", stages="ALL", implicit_lod=False, operands="",
            recipe="unused opcode number; accepted and printed back, no operation",
            semantics="No operation (unassigned opcode number)"))
    names = {e["variant"] for e in entries}
    assert len(names) == len(entries), "variant names must be unique"

    # Canonical opcode for aliases and renamed opcodes: the recipe names it.
    by_name = {}
    for e in entries:
        by_name.setdefault(e["name"], e["variant"])
    for e in entries:
        canon = None
        if e["status"] == "Alias":
            canon = by_name[e["recipe"]]
        elif e["status"] == "Removed" and re.fullmatch(r"[A-Z0-9_]+", e["recipe"] or "-"):
            canon = by_name.get(e["recipe"])
        e["canon_variant"] = canon
    # Follow rename chains (TEXKILL → KIL → KILL_IF) so `canonical` is as current as possible.
    by_variant = {e["variant"]: e for e in entries}
    for e in entries:
        canon = e["canon_variant"]
        while canon and by_variant[canon]["canon_variant"]:
            canon = by_variant[canon]["canon_variant"]
        e["canonical"] = f"Some(Opcode::{canon})" if canon else "None"

    out = []
    w = out.append
    w("// @generated by tools/gen-tgsi-opcodes.py from tools/tgsi-opcodes.csv. Do not edit by hand.")
    w("")
    w("use super::{FlowRole, Indent, OpcodeInfo, OutputMode, StageMask, Status, OperandType as T};")
    w("")
    w("/// Every TGSI opcode any Mesa release knew: current (25.0.7), gap names, removed and alias spellings.")
    w("///")
    w("/// The discriminant is the index into [`OPCODES`].")
    w("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]")
    w("#[repr(u16)]")
    w("pub enum Opcode {")
    for e in entries:
        w(f"    /// `{e['name']}` ({e['status'].lower()}): {e['semantics']}")
        w(f"    {e['variant']},")
    w("}")
    w("")
    w("/// One row per [`Opcode`], in the same order.")
    w("pub static OPCODES: [OpcodeInfo; %d] = [" % len(entries))
    for e in entries:
        indent = {"": "Indent::None", "indent-after": "Indent::After", "dedent-before": "Indent::Before",
                  "dedent-before indent-after": "Indent::BeforeAndAfter"}[e["indent"]]
        flow = f"Some(FlowRole::{e['flow']})" if e["flow"] else "None"
        w("    OpcodeInfo {")
        w(f"        name: {rust_str(e['name'])},")
        w(f"        status: Status::{e['status']},")
        w(f"        number: {e['number']},")
        w(f"        introduced_in: {rust_str(e['introduced'])},")
        w(f"        removed_in: {rust_str(e['removed'])},")
        w(f"        num_dst: {e['num_dst']},")
        w(f"        num_src: {e['num_src']},")
        w(f"        output_mode: OutputMode::{e['mode']},")
        w(f"        output_mode_inferred: {str(e['inferred']).lower()},")
        w(f"        src_types: {e['src']},")
        w(f"        dst_types: {e['dst']},")
        w(f"        has_texture_target: {str(e['is_texture']).lower()},")
        w(f"        has_texture_offsets: {str(e['offsets']).lower()},")
        w(f"        has_memory_items: {str(e['memory']).lower()},")
        w(f"        has_branch_label: {str(e['label']).lower()},")
        w(f"        flow: {flow},")
        w(f"        indent: {indent},")
        w(f"        stages: StageMask::{e['stages']},")
        w(f"        implicit_lod: {str(e['implicit_lod']).lower()},")
        w(f"        canonical: {e['canonical']},")
        w(f"        operands: {rust_str(e['operands'])},")
        w(f"        recipe: {rust_str(e['recipe'])},")
        w(f"        semantics: {rust_str(e['semantics'])},")
        w("    },")
    w("];")
    w("")
    w("/// All opcodes in table order.")
    w("pub static ALL: [Opcode; %d] = [" % len(entries))
    for e in entries:
        w(f"    Opcode::{e['variant']},")
    w("];")
    w("")
    w("/// Exact (upper-case) name → opcode. For the two names used twice (`LOAD`, `ENDLOOP`) this")
    w("/// returns the current opcode; the parser picks the legacy one from context.")
    w("pub fn by_upper_name(name: &[u8]) -> Option<Opcode> {")
    w("    Some(match name {")
    seen = set()
    for e in entries:
        if e["name"] in seen:
            continue
        seen.add(e["name"])
        w(f"        b{rust_str(e['name'])} => Opcode::{e['variant']},")
    w("        _ => return None,")
    w("    })")
    w("}")
    open("src/tgsi/opcodes_table.rs", "w").write("\n".join(out) + "\n")
    print(f"wrote src/tgsi/opcodes_table.rs: {len(entries)} opcodes", file=sys.stderr)


if __name__ == "__main__":
    main()
