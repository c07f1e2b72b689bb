//! Human-readable views of the tables: the instruction list and per-instruction description of
//! `tgsi2va isa`, the resolved one-line form of the encoding spec's Appendix A (used by the
//! self-check test), and the self-contained HTML reference `docs/isa.html`
//! (`tgsi2va isa --html > docs/isa.html`).

use super::tables::*;
use std::fmt::Write;

/// One line per instruction: mnemonic, primary opcode, secondary opcode, unit, description.
pub fn list() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:<24} {:<6} {:<14} {:<5} description", "instruction", "opcode", "secondary", "unit");
    for op in Opcode::ALL {
        let i = op.info();
        let _ = writeln!(
            out,
            "{:<24} {:#05x}  {:<14} {:<5} {}",
            i.name,
            i.primary,
            secondary_text(i),
            i.unit.name(),
            i.about
        );
    }
    out
}

fn secondary_text(i: &InstrInfo) -> String {
    match i.secondary {
        Some(s) => format!("{} @{}/{:#X}", s.value, s.shift, s.mask).replace("0X", "0x"),
        None => "—".to_string(),
    }
}

fn bits(start: u8, width: u8) -> String {
    if width == 1 { start.to_string() } else { format!("{}..{}", start, start + width - 1) }
}

/// The resolved form of one instruction in the notation of the encoding spec's Appendix A
/// (`| mnemonic | opcode | secondary | unit | operands | modifiers |`).
pub fn appendix_row(op: Opcode) -> String {
    let i = op.info();
    let mut ops: Vec<String> = Vec::new();
    for s in i.staging {
        let count = if s.count_minus_one { "n-1" } else { "n" };
        ops.push(format!(
            "@{} {} c{:02b} {count}@{}",
            if s.write { "W" } else { "R" },
            bits(s.base_start, 6),
            s.control,
            bits(s.count_start, 3)
        ));
    }
    if i.dest {
        ops.push("D".into());
    }
    for s in i.srcs {
        let mut t = format!("S{}:{}", s.slot, s.size);
        if s.float && s.neg.is_none() {
            t.push_str(" float");
        }
        if let Some(b) = s.neg {
            let _ = write!(t, " neg{b}");
        }
        if let Some(b) = s.abs {
            let _ = write!(t, " abs{b}");
        }
        if let Some(f) = s.swizzle {
            let e = if f.values == EnumId::Widen { "widen" } else { "sw16" };
            let _ = write!(t, " swz{}({e})", bits(f.start, f.width));
        }
        if let Some(f) = s.widen {
            let r = bits(f.start, f.width);
            match s.widen_kind {
                WidenKind::Widen => {
                    let _ = write!(t, " wid{r}(sw{})", s.size);
                }
                WidenKind::Lanes => {
                    let _ = write!(t, " lanes{r}");
                }
                WidenKind::HalfSwizzle => {
                    let _ = write!(t, " hsw{r}");
                }
                WidenKind::Combine | WidenKind::None => {
                    let _ = write!(t, " comb{r}");
                }
            }
        }
        if let Some(f) = s.lane {
            let _ = write!(t, " lane{}(l{})", bits(f.start, f.width), s.size);
        }
        if let Some(b) = s.not {
            let _ = write!(t, " not{b}");
        }
        ops.push(t);
    }
    for f in i.imms {
        let name = if f.name == "constant" { "#" } else { f.name };
        ops.push(format!("{name}:{}..{}{}", f.start, f.start + f.width - 1, if f.signed { " signed" } else { "" }));
    }
    // The spec's table knows Mesa's view: spellings, no hidden fields.
    let mods: Vec<String> = i
        .mods
        .iter()
        .filter(|m| !m.hidden)
        .map(|m| {
            let mut t = format!("{} {}", m.text, bits(m.start, m.width));
            if let Some(e) = m.enum_info() {
                match e.default {
                    None => t.push_str(" (req)"),
                    Some(0) => {}
                    Some(d) => {
                        let _ = write!(t, " (def {})", e.display(d));
                    }
                }
            }
            t
        })
        .collect();
    let join = |v: Vec<String>, sep: &str| if v.is_empty() { "—".to_string() } else { v.join(sep) };
    format!(
        "| `{}` | {:#05X} | {} | {} | {} | {} |",
        i.name,
        i.primary,
        secondary_text(i),
        i.unit.name(),
        join(ops, "; "),
        join(mods, ", ")
    )
    .replacen("0X", "0x", 1)
}

/// One field of the bit diagram.
struct Field {
    label: String,
    class: &'static str,
    /// Bits with a fixed value: the value.
    constant: Option<u64>,
}

/// Field owning each bit of the word (`None` = unused, must be zero).
fn layout(i: &InstrInfo) -> (Vec<Field>, [Option<usize>; 64]) {
    let mut fields: Vec<Field> = Vec::new();
    let mut owner: [Option<usize>; 64] = [None; 64];
    let mut add = |fields: &mut Vec<Field>, label: String, class: &'static str, mask: u64, constant: Option<u64>| {
        let id = fields.len();
        fields.push(Field { label, class, constant });
        for (b, o) in owner.iter_mut().enumerate() {
            if mask >> b & 1 == 1 {
                // A constant-zero part (placeholder, staging control 00) yields to the real field.
                let yields = o.is_none_or(|prev| fields[prev].constant.is_some_and(|v| v >> b & 1 == 0));
                if yields {
                    *o = Some(id);
                }
            }
        }
    };
    let range = |start: u8, width: u8| ((1u64 << width) - 1) << start;
    add(&mut fields, "0".into(), "rsv", 1 << 63, Some(0));
    add(&mut fields, "flow".into(), "flow", range(59, 4), None);
    add(&mut fields, "FAU page".into(), "page", range(57, 2), None);
    add(&mut fields, format!("opcode {:#05x}", i.primary), "op", range(48, 9), Some(u64::from(i.primary) << 48));
    if let Some(s) = i.secondary {
        add(
            &mut fields,
            format!("op2 = {}", s.value),
            "op",
            u64::from(s.mask) << s.shift,
            Some(u64::from(s.value) << s.shift),
        );
    }
    if i.placeholder {
        add(&mut fields, "0xC0".into(), "fix", range(40, 8), Some(0xC0 << 40));
    }
    if i.dest {
        add(&mut fields, "dest reg".into(), "dst", range(40, 6), None);
        add(&mut fields, "write mask".into(), "dst", range(46, 2), None);
    }
    for (k, s) in i.staging.iter().enumerate() {
        let dir = if s.write { "write" } else { "read" };
        add(&mut fields, format!("@sr{k} ({dir})"), "sr", range(s.base_start, 6), None);
        add(
            &mut fields,
            format!("ctl {:02b}", s.control),
            "fix",
            range(s.control_start, 2),
            Some(u64::from(s.control) << s.control_start),
        );
        let c = if s.count_minus_one { "count−1" } else { "count" };
        add(&mut fields, format!("sr{k} {c}"), "sr", range(s.count_start, 3), None);
    }
    const SRC: [&str; 4] = ["s0", "s1", "s2", "s3"];
    for (k, s) in i.srcs.iter().enumerate() {
        let class = SRC[k.min(3)];
        add(&mut fields, format!("src{k} ({}-bit)", s.size), class, range(8 * s.slot, 8), None);
        for (what, bit) in [("neg", s.neg), ("abs", s.abs), ("not", s.not)] {
            if let Some(b) = bit {
                add(&mut fields, format!("{what}{k}"), class, 1 << b, None);
            }
        }
        if let Some(f) = s.swizzle {
            add(&mut fields, format!("swz{k}"), class, range(f.start, f.width), None);
        }
        if let Some(f) = s.widen {
            let what = match s.widen_kind {
                WidenKind::Lanes => "lanes",
                WidenKind::HalfSwizzle => "hswz",
                WidenKind::Combine => "combine",
                _ => "widen",
            };
            add(&mut fields, format!("{what}{k}"), class, range(f.start, f.width), None);
        }
        if let Some(f) = s.lane {
            add(&mut fields, format!("lane{k}"), class, range(f.start, f.width), None);
        }
    }
    for f in i.imms {
        let name = if f.name == "constant" { "#constant" } else { f.name };
        add(&mut fields, name.to_string(), "imm", range(f.start, f.width), None);
    }
    for m in i.mods {
        add(&mut fields, m.key.to_string(), "mod", range(m.start, m.width), None);
    }
    (fields, owner)
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn anchor(name: &str) -> String {
    name.replace('.', "_")
}

fn operand_lines(i: &InstrInfo) -> Vec<String> {
    let mut lines = Vec::new();
    for (k, s) in i.staging.iter().enumerate() {
        lines.push(format!(
            "staging {k}: {} group, base register bits {}, control bits {} = {:02b}, count in bits {}{}",
            if s.write { "written" } else { "read" },
            bits(s.base_start, 6),
            bits(s.control_start, 2),
            s.control,
            bits(s.count_start, 3),
            if s.count_minus_one { " (count − 1, 1..8 registers)" } else { " (0..7 registers)" }
        ));
    }
    if i.dest {
        lines.push("destination: register bits 40..45, write mask bits 46..47 (3 whole, 1 .h0, 2 .h1)".into());
    }
    for (k, s) in i.srcs.iter().enumerate() {
        let mut t = format!(
            "source {k}: {}-bit{}, slot {} (bits {})",
            s.size,
            if s.float { " float" } else { "" },
            s.slot,
            bits(8 * s.slot, 8)
        );
        for (what, bit) in [("neg", s.neg), ("abs", s.abs), ("not", s.not)] {
            if let Some(b) = bit {
                let _ = write!(t, ", .{what} bit {b}");
            }
        }
        for (what, f) in [("swizzle", s.swizzle), ("widen", s.widen), ("lane", s.lane)] {
            if let Some(f) = f {
                let what = if what == "widen" {
                    match s.widen_kind {
                        WidenKind::Lanes => "lanes",
                        WidenKind::HalfSwizzle => "half-swizzle",
                        WidenKind::Combine => "combine",
                        _ => "widen",
                    }
                } else {
                    what
                };
                let _ = write!(t, ", {what} bits {} ({})", bits(f.start, f.width), f.values.info().key);
            }
        }
        lines.push(t);
    }
    for f in i.imms {
        lines.push(format!(
            "immediate {}: bits {}, {}",
            if f.name == "constant" { "#constant" } else { f.name },
            bits(f.start, f.width),
            if f.signed { "signed" } else { "unsigned" }
        ));
    }
    lines
}

fn modifier_line(m: &ModInfo) -> String {
    match m.enum_info() {
        None if m.hidden => {
            format!("{} (flag, bit {}; not printed, as Mesa's text tools do not know it)", m.key, m.start)
        }
        None if m.text != m.key => format!("{} (flag, bit {}; printed `.{}` as Mesa does)", m.key, m.start, m.text),
        None => format!("{} (flag, bit {})", m.key, m.start),
        Some(e) => {
            let values: Vec<String> = e
                .values
                .iter()
                .enumerate()
                .filter_map(|(k, v)| {
                    v.map(|v| if Some(k as u8) == e.default { format!("{k}={v}*") } else { format!("{k}={v}") })
                })
                .collect();
            format!(
                "{} ({} {}, enum {}{}): {}",
                m.key,
                if m.width == 1 { "bit" } else { "bits" },
                bits(m.start, m.width),
                e.key,
                if e.default.is_none() { ", required" } else { "" },
                values.join(" ")
            )
        }
    }
}

/// A text description of one instruction.
pub fn describe(op: Opcode) -> String {
    let i = op.info();
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", i.name, i.about);
    let _ = writeln!(out, "unit {} ({}), type size {}", i.unit.name(), i.unit.note(), i.type_size);
    let _ = writeln!(out, "primary opcode {:#05x} (bits 48..56), secondary {}", i.primary, secondary_text(i));
    let (mask, value) = i.opcode_pattern();
    let _ = writeln!(out, "word & {mask:#018x} == {value:#018x}");
    let (fields, owner) = layout(i);
    let _ = writeln!(out, "\nbits:");
    let mut b = 63i32;
    while b >= 0 {
        let o = owner[b as usize];
        let mut lo = b;
        while lo > 0 && owner[(lo - 1) as usize] == o {
            lo -= 1;
        }
        let label = o.map_or("unused (0)".to_string(), |id| fields[id].label.clone());
        let r = if lo == b { format!("{b}") } else { format!("{b}..{lo}") };
        let _ = writeln!(out, "  {r:>7}  {label}");
        b = lo - 1;
    }
    let _ = writeln!(out, "\noperands (text order):");
    for l in operand_lines(i) {
        let _ = writeln!(out, "  {l}");
    }
    if i.srcs.is_empty() && i.staging.is_empty() && !i.dest && i.imms.is_empty() {
        let _ = writeln!(out, "  none");
    }
    let _ = writeln!(out, "\nmodifiers (printing order; * = default):");
    for m in i.mods {
        let _ = writeln!(out, "  {}", modifier_line(m));
    }
    let _ = writeln!(out, "  flow (bits 59..62): none*, wait0, …, end");
    for (a, b) in i.overlaps {
        let _ = writeln!(out, "note: fields `{a}` and `{b}` share bits (declared; the constant part is zero there)");
    }
    out
}

fn diagram(out: &mut String, i: &InstrInfo) {
    let (fields, owner) = layout(i);
    out.push_str("<table class=\"bits\">");
    for half in [1usize, 0] {
        let top = 32 * half + 31;
        out.push_str("<tr>");
        let mut b = top as i32;
        let low = (32 * half) as i32;
        while b >= low {
            let o = owner[b as usize];
            let mut lo = b;
            while lo > low && owner[(lo - 1) as usize] == o {
                lo -= 1;
            }
            let width = b - lo + 1;
            let (class, label) = match o {
                Some(id) => {
                    let f = &fields[id];
                    let label = match f.constant {
                        Some(v) => {
                            let bits: String =
                                (lo..=b).rev().map(|k| if v >> k & 1 == 1 { '1' } else { '0' }).collect();
                            format!("{}<br><code>{bits}</code>", esc(&f.label))
                        }
                        None => esc(&f.label),
                    };
                    (f.class, label)
                }
                None => ("unused", "—".to_string()),
            };
            let range = if width == 1 { format!("{b}") } else { format!("{b}–{lo}") };
            let _ =
                write!(out, "<td colspan=\"{width}\" class=\"{class}\"><span class=\"n\">{range}</span>{label}</td>");
            b = lo - 1;
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\
code{font-family:ui-monospace,monospace}h2{margin-top:2.5em;border-bottom:1px solid #ccc}\
table.bits{border-collapse:collapse;table-layout:fixed;width:100%;font-size:11px;margin:.5em 0}\
table.bits td{border:1px solid #888;text-align:center;padding:2px 1px;overflow:hidden;height:3em;vertical-align:top}\
table.bits .n{display:block;color:#555;font-size:9px}\
.op{background:#d9d9d9}.fix{background:#eeeeee}.rsv{background:#bbbbbb}.unused{background:#fff;color:#aaa}\
.flow{background:#f6c6c6}.page{background:#f9dfb5}.dst{background:#c7e6c1}.sr{background:#b9e3da}\
.s0{background:#c6d8f5}.s1{background:#dccbf2}.s2{background:#f3d1e6}.s3{background:#f5e6b8}\
.imm{background:#f7f3a6}.mod{background:#cfe9f7}table.t{border-collapse:collapse;font-size:13px}\
table.t td,table.t th{border:1px solid #ccc;padding:2px 6px;text-align:left}ul.ops{margin:.3em 0}\
.idx{columns:4;font-size:13px}.idx a{text-decoration:none}";

/// The self-contained HTML reference of the whole ISA.
pub fn html() -> String {
    let mut o = String::with_capacity(1 << 20);
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str("<title>Mali Valhall ISA reference (tgsi2va)</title>\n");
    let _ = writeln!(o, "<style>{STYLE}</style>\n</head>\n<body>");
    o.push_str("<h1>Arm Mali Valhall (v9/v10) instruction set</h1>\n");
    o.push_str(
        "<p>Generated by <code>tgsi2va isa --html</code> from <code>isa/valhall.isa</code>; do not edit. \
Every instruction is one 64-bit little-endian word. Diagrams show bit 63 at the top left and bit 0 at the \
bottom right; fixed bits show their value. Text syntax is Mesa's (see <code>docs/valhall.md</code>).</p>\n",
    );
    o.push_str("<h2 id=\"index\">Instructions</h2>\n<div class=\"idx\">\n");
    for op in Opcode::ALL {
        let i = op.info();
        let _ = writeln!(o, "<a href=\"#{}\">{}</a> <small>{}</small><br>", anchor(i.name), esc(i.name), i.unit.name());
    }
    o.push_str("</div>\n<h2 id=\"units\">Units</h2>\n<table class=\"t\"><tr><th>unit</th><th>kind</th><th>description</th></tr>\n");
    for u in Unit::ALL {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            u.name(),
            if u.is_alu() { "arithmetic" } else { "message" },
            esc(u.note())
        );
    }
    o.push_str("</table>\n<h2 id=\"immediates\">Immediate table</h2>\n<table class=\"t\"><tr><th>index</th><th>byte</th><th>value</th><th>meaning</th></tr>\n");
    for (k, (v, note)) in IMMEDIATES.iter().enumerate() {
        let _ = writeln!(
            o,
            "<tr><td>{k}</td><td>0x{:02X}</td><td><code>0x{v:X}</code></td><td>{}</td></tr>",
            0xC0 + k,
            esc(note)
        );
    }
    o.push_str("</table>\n<h2 id=\"specials\">Special FAU values</h2>\n<table class=\"t\"><tr><th>page</th><th>entry</th><th>bytes (.w0/.w1)</th><th>name</th><th>meaning</th></tr>\n");
    for (page, entries) in SPECIALS.iter().enumerate() {
        for (entry, e) in entries.iter().enumerate() {
            if let Some((name, note)) = e {
                let b = 0xE0 + 2 * entry;
                let _ = writeln!(
                    o,
                    "<tr><td>{page}</td><td>{entry}</td><td>0x{b:02X}/0x{:02X}</td><td><code>{name}</code></td><td>{}</td></tr>",
                    b + 1,
                    esc(note)
                );
            }
        }
    }
    o.push_str("</table>\n<h2 id=\"enums\">Enumerations</h2>\n<p>* marks the default; an enum without default is required in assembly.</p>\n<table class=\"t\"><tr><th>enum</th><th>values by index</th><th>meaning</th></tr>\n");
    for e in &ENUMS {
        let values: Vec<String> = e
            .values
            .iter()
            .enumerate()
            .map(|(k, v)| match v {
                Some(v) if Some(k as u8) == e.default => format!("{k} <code>{}</code>*", esc(v)),
                Some(v) => format!("{k} <code>{}</code>", esc(v)),
                None => format!("{k} <i>reserved</i>"),
            })
            .collect();
        let _ = writeln!(
            o,
            "<tr><td id=\"enum-{}\"><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            e.key,
            e.key,
            values.join(", "),
            esc(e.title)
        );
    }
    o.push_str("</table>\n");
    for op in Opcode::ALL {
        let i = op.info();
        let _ = writeln!(o, "<h2 id=\"{}\">{}</h2>", anchor(i.name), esc(i.name));
        let _ = writeln!(o, "<p>{}</p>", esc(i.about));
        let _ = writeln!(
            o,
            "<p>Unit <b>{}</b> · primary opcode <code>{:#05x}</code> · secondary <code>{}</code> · type size {}</p>",
            i.unit.name(),
            i.primary,
            esc(&secondary_text(i)),
            i.type_size
        );
        diagram(&mut o, i);
        o.push_str("<ul class=\"ops\">");
        for l in operand_lines(i) {
            let _ = write!(o, "<li>{}</li>", esc(&l));
        }
        for m in i.mods {
            let _ = write!(o, "<li>modifier {}</li>", esc(&modifier_line(m)));
        }
        for (a, b) in i.overlaps {
            let _ = write!(o, "<li>declared overlap: <code>{a}</code> / <code>{b}</code></li>");
        }
        o.push_str("</ul>\n");
    }
    o.push_str("</body>\n</html>\n");
    o
}
