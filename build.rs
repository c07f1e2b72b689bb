//! Reads `isa/valhall.isa` (format: `isa/README.md`), checks it, and writes the Rust tables
//! `$OUT_DIR/isa_tables.rs` that `src/valhall/tables.rs` includes.
//!
//! The build fails with a message naming the line when the description is malformed, when two
//! instructions could match the same word (their opcode/secondary bits agree), or when two
//! fields of one instruction share a bit without an `overlap` declaration (a declared overlap
//! must exist, and one of the two fields must be a constant that is zero on the shared bits).

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::{digit1, hex_digit1, space0, space1};
use nom::combinator::{map_res, opt, rest};
use nom::sequence::preceded;
use nom::{IResult, Parser};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::PathBuf;

const ISA_PATH: &str = "isa/valhall.isa";

fn main() {
    println!("cargo:rerun-if-changed={ISA_PATH}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = match std::fs::read_to_string(ISA_PATH) {
        Ok(text) => text,
        Err(e) => fail(&format!("cannot read {ISA_PATH}: {e}")),
    };
    let isa = match parse_file(&text).and_then(|isa| check(&isa).map(|()| isa)) {
        Ok(isa) => isa,
        Err(message) => fail(&message),
    };
    let code = generate(&isa);
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("isa_tables.rs");
    if let Err(e) = std::fs::write(&out, code) {
        fail(&format!("cannot write {}: {e}", out.display()));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("error: invalid ISA description: {message}");
    std::process::exit(1);
}

// ───────────────────────────── model ─────────────────────────────

#[derive(Clone, Debug)]
struct EnumDef {
    key: String,
    title: String,
    values: Vec<Option<String>>,
    default: Option<usize>,
    line: usize,
}

#[derive(Clone, Debug)]
struct Special {
    entry: u8,
    name: String,
    note: String,
}

#[derive(Clone, Debug)]
struct UnitDef {
    name: String,
    alu: bool,
    note: String,
}

type Range = (u8, u8);

#[derive(Clone, Debug, PartialEq)]
enum WidenKind {
    Widen,
    Lanes,
    HalfSwizzle,
    Combine,
}

#[derive(Clone, Debug, Default)]
struct SrcDef {
    slot: u8,
    size: u8,
    float: bool,
    neg: Option<u8>,
    abs: Option<u8>,
    not: Option<u8>,
    swizzle: Option<(Range, String)>,
    widen: Option<(WidenKind, Range, String)>,
    lane: Option<(Range, String)>,
}

#[derive(Clone, Debug)]
enum Body {
    Staging { write: bool, base: Range, control: u8, control_bits: Range, minus_one: bool, count: Range },
    Dest { reg: Range, mask: Range },
    Src(SrcDef),
    Imm { name: String, range: Range, signed: bool },
    Fixed { name: String, range: Range, value: u64 },
    Mod { key: String, range: Range, enum_key: Option<String> },
    Overlap(String, String),
}

#[derive(Clone, Debug)]
struct Inst {
    name: String,
    opcode: Option<u16>,
    secondary: Option<(u16, u8, u16)>,
    unit: Option<String>,
    about: Option<String>,
    template: Option<String>,
    body: Vec<(Body, usize)>,
    line: usize,
}

#[derive(Default, Debug)]
struct Isa {
    units: Vec<UnitDef>,
    immediates: Vec<(u32, String)>,
    specials: BTreeMap<u8, Vec<Special>>,
    enums: Vec<EnumDef>,
    templates: HashMap<String, Vec<(Body, usize)>>,
    insts: Vec<Inst>,
}

// ───────────────────────────── parsing ─────────────────────────────

type Res<'a, T> = IResult<&'a str, T>;

fn number(i: &str) -> Res<'_, u64> {
    alt((
        map_res(preceded(tag("0x"), hex_digit1), |h: &str| u64::from_str_radix(h, 16)),
        map_res(digit1, |d: &str| d.parse::<u64>()),
    ))
    .parse(i)
}

fn ident(i: &str) -> Res<'_, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.').parse(i)
}

fn bit_range(i: &str) -> Res<'_, Range> {
    let (i, a) = number(i)?;
    let (i, b) = opt(preceded(tag(".."), number)).parse(i)?;
    let b = b.unwrap_or(a);
    Ok((i, (a.min(255) as u8, b.min(255) as u8)))
}

/// One whitespace-separated word (for keyword dispatch).
fn word(i: &str) -> Res<'_, &str> {
    preceded(space0, take_while1(|c: char| !c.is_whitespace())).parse(i)
}

fn ws_number(i: &str) -> Res<'_, u64> {
    preceded(space1, number).parse(i)
}

fn ws_range(i: &str) -> Res<'_, Range> {
    preceded(space1, bit_range).parse(i)
}

fn ws_tag<'a>(t: &'static str) -> impl Parser<&'a str, Output = &'a str, Error = nom::error::Error<&'a str>> {
    preceded(space1, tag(t))
}

fn rest_text(i: &str) -> Res<'_, &str> {
    preceded(space0, rest).parse(i)
}

/// Runs a line parser to completion, turning a nom error into a message.
fn full<'a, T>(
    line: &'a str,
    no: usize,
    mut p: impl Parser<&'a str, Output = T, Error = nom::error::Error<&'a str>>,
) -> Result<T, String> {
    match p.parse(line) {
        Ok((remaining, value)) if remaining.trim().is_empty() => Ok(value),
        Ok((remaining, _)) => Err(format!("{ISA_PATH}:{no}: unexpected `{}`", remaining.trim())),
        Err(_) => Err(format!("{ISA_PATH}:{no}: cannot parse `{}`", line.trim())),
    }
}

fn parse_src(line: &str, no: usize) -> Result<SrcDef, String> {
    let mut words = line.split_whitespace();
    let _ = words.next();
    let err = |m: &str| format!("{ISA_PATH}:{no}: {m}");
    let slot = words.next().and_then(|w| w.parse::<u8>().ok()).ok_or_else(|| err("`src` needs a slot number"))?;
    let size = words.next().and_then(|w| w.parse::<u8>().ok()).ok_or_else(|| err("`src` needs a size in bits"))?;
    let mut src = SrcDef { slot, size, ..SrcDef::default() };
    for attr in words {
        if attr == "float" {
            src.float = true;
            continue;
        }
        let (kind, spec) = attr.split_once('@').ok_or_else(|| err(&format!("bad source attribute `{attr}`")))?;
        let (range_text, enum_key) = match spec.split_once('=') {
            Some((r, e)) => (r, Some(e.to_string())),
            None => (spec, None),
        };
        let range = full(range_text, no, bit_range)?;
        let need_enum = || enum_key.clone().ok_or_else(|| err(&format!("`{kind}` needs `=ENUM`")));
        let single = |r: Range| if r.0 == r.1 { Ok(r.0) } else { Err(err(&format!("`{kind}` is one bit"))) };
        match kind {
            "neg" => src.neg = Some(single(range)?),
            "abs" => src.abs = Some(single(range)?),
            "not" => src.not = Some(single(range)?),
            "swizzle" => src.swizzle = Some((range, need_enum()?)),
            "lane" => src.lane = Some((range, need_enum()?)),
            "widen" | "lanes" | "halfswizzle" | "combine" => {
                if src.widen.is_some() {
                    return Err(err("a source has at most one widen/lanes/halfswizzle/combine field"));
                }
                let kind = match kind {
                    "widen" => WidenKind::Widen,
                    "lanes" => WidenKind::Lanes,
                    "halfswizzle" => WidenKind::HalfSwizzle,
                    _ => WidenKind::Combine,
                };
                src.widen = Some((kind, range, need_enum()?));
            }
            other => return Err(err(&format!("unknown source attribute `{other}`"))),
        }
    }
    Ok(src)
}

fn parse_body(line: &str, no: usize) -> Result<Body, String> {
    let (_, keyword) = word(line).map_err(|_| format!("{ISA_PATH}:{no}: empty line"))?;
    let after = &line.trim_start()[keyword.len()..];
    match keyword {
        "staging" => full(after, no, |i| {
            let (i, dir) = preceded(space1, alt((tag("write"), tag("read")))).parse(i)?;
            let (i, base) = preceded(ws_tag("base"), ws_range).parse(i)?;
            let (i, control) =
                preceded(ws_tag("control"), preceded(space1, alt((tag("00"), tag("01"), tag("10"), tag("11")))))
                    .parse(i)?;
            let (i, control_bits) = preceded(ws_tag("at"), ws_range).parse(i)?;
            let (i, count_kw) = preceded(space1, alt((tag("count-1"), tag("count")))).parse(i)?;
            let (i, count) = ws_range(i)?;
            let control = u8::from_str_radix(control, 2).unwrap_or(0);
            Ok((
                i,
                Body::Staging {
                    write: dir == "write",
                    base,
                    control,
                    control_bits,
                    minus_one: count_kw == "count-1",
                    count,
                },
            ))
        }),
        "dest" => full(after, no, |i| {
            let (i, reg) = ws_range(i)?;
            let (i, mask) = preceded(ws_tag("mask"), ws_range).parse(i)?;
            Ok((i, Body::Dest { reg, mask }))
        }),
        "src" => parse_src(line, no).map(Body::Src),
        "imm" => full(after, no, |i| {
            let (i, name) = preceded(space1, ident).parse(i)?;
            let (i, range) = ws_range(i)?;
            let (i, signed) = opt(ws_tag("signed")).parse(i)?;
            Ok((i, Body::Imm { name: name.to_string(), range, signed: signed.is_some() }))
        }),
        "fixed" => full(after, no, |i| {
            let (i, name) = preceded(space1, ident).parse(i)?;
            let (i, range) = ws_range(i)?;
            let (i, value) = preceded(ws_tag("="), ws_number).parse(i)?;
            Ok((i, Body::Fixed { name: name.to_string(), range, value }))
        }),
        "mod" => full(after, no, |i| {
            let (i, key) = preceded(space1, ident).parse(i)?;
            let (i, range) = ws_range(i)?;
            let (i, kind) = preceded(space1, alt((tag("flag"), tag("enum")))).parse(i)?;
            let (i, enum_key) = if kind == "enum" { preceded(space1, ident).map(Some).parse(i)? } else { (i, None) };
            Ok((i, Body::Mod { key: key.to_string(), range, enum_key: enum_key.map(str::to_string) }))
        }),
        "overlap" => full(after, no, |i| {
            let (i, a) = preceded(space1, ident).parse(i)?;
            let (i, b) = preceded(space1, ident).parse(i)?;
            Ok((i, Body::Overlap(a.to_string(), b.to_string())))
        }),
        other => Err(format!("{ISA_PATH}:{no}: unknown line `{other}`")),
    }
}

enum Block {
    None,
    Immediates,
    Specials(u8),
    Enum(EnumDef),
    Template(String, Vec<(Body, usize)>),
    Inst(Inst),
}

fn parse_file(text: &str) -> Result<Isa, String> {
    let mut isa = Isa::default();
    let mut block = Block::None;
    for (index, raw) in text.lines().enumerate() {
        let no = index + 1;
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let err = |m: String| format!("{ISA_PATH}:{no}: {m}");
        let (_, keyword) = word(trimmed).map_err(|_| err("empty".into()))?;
        if keyword == "end" {
            match std::mem::replace(&mut block, Block::None) {
                Block::None => return Err(err("`end` without a block".into())),
                Block::Immediates | Block::Specials(_) => {}
                Block::Enum(e) => isa.enums.push(e),
                Block::Template(name, body) => {
                    if isa.templates.insert(name.clone(), body).is_some() {
                        return Err(err(format!("template `{name}` defined twice")));
                    }
                }
                Block::Inst(inst) => isa.insts.push(inst),
            }
            continue;
        }
        let after = &trimmed[keyword.len()..];
        match &mut block {
            Block::None => match keyword {
                "unit" => {
                    let (name, class, note) = full(after, no, |i| {
                        let (i, name) = preceded(space1, ident).parse(i)?;
                        let (i, class) = preceded(space1, alt((tag("alu"), tag("message")))).parse(i)?;
                        let (i, note) = rest_text(i)?;
                        Ok((i, (name, class, note)))
                    })?;
                    isa.units.push(UnitDef { name: name.into(), alu: class == "alu", note: note.into() });
                }
                "immediates" => block = Block::Immediates,
                "specials" => {
                    let page = full(after, no, preceded(ws_tag("page"), ws_number))?;
                    if page > 3 || isa.specials.contains_key(&(page as u8)) {
                        return Err(err(format!("bad or repeated FAU page {page}")));
                    }
                    isa.specials.insert(page as u8, Vec::new());
                    block = Block::Specials(page as u8);
                }
                "enum" => {
                    let (key, title) = full(after, no, |i| {
                        let (i, key) = preceded(space1, ident).parse(i)?;
                        let (i, title) = rest_text(i)?;
                        Ok((i, (key, title)))
                    })?;
                    block = Block::Enum(EnumDef {
                        key: key.into(),
                        title: title.into(),
                        values: vec![],
                        default: None,
                        line: no,
                    });
                }
                "template" => {
                    let name = full(after, no, preceded(space1, ident))?;
                    block = Block::Template(name.into(), Vec::new());
                }
                "inst" => {
                    let name = full(after, no, preceded(space1, ident))?;
                    block = Block::Inst(Inst {
                        name: name.into(),
                        opcode: None,
                        secondary: None,
                        unit: None,
                        about: None,
                        template: None,
                        body: Vec::new(),
                        line: no,
                    });
                }
                other => return Err(err(format!("unknown block `{other}`"))),
            },
            Block::Immediates => {
                let (index, value, note) = full(trimmed, no, |i| {
                    let (i, index) = number(i)?;
                    let (i, value) = ws_number(i)?;
                    let (i, note) = rest_text(i)?;
                    Ok((i, (index, value, note)))
                })?;
                if index as usize != isa.immediates.len() || value > u64::from(u32::MAX) {
                    return Err(err(format!("immediate {index} out of order or too large")));
                }
                isa.immediates.push((value as u32, note.into()));
            }
            Block::Specials(page) => {
                let (entry, name, note) = full(trimmed, no, |i| {
                    let (i, entry) = number(i)?;
                    let (i, name) = preceded(space1, ident).parse(i)?;
                    let (i, note) = rest_text(i)?;
                    Ok((i, (entry, name, note)))
                })?;
                if entry > 15 {
                    return Err(err(format!("special entry {entry} is not 0..15")));
                }
                let list = isa.specials.entry(*page).or_default();
                list.push(Special { entry: entry as u8, name: name.into(), note: note.into() });
            }
            Block::Enum(e) => {
                let (index, name, default) = full(trimmed, no, |i| {
                    let (i, index) = number(i)?;
                    let (i, name) = preceded(space1, ident).parse(i)?;
                    let (i, default) = opt(ws_tag("default")).parse(i)?;
                    Ok((i, (index, name, default.is_some())))
                })?;
                if index as usize != e.values.len() {
                    return Err(err(format!("enum `{}`: expected index {}, found {index}", e.key, e.values.len())));
                }
                if default {
                    if e.default.is_some() || name == "reserved" {
                        return Err(err(format!("enum `{}`: bad default", e.key)));
                    }
                    e.default = Some(e.values.len());
                }
                e.values.push(if name == "reserved" { None } else { Some(name.to_string()) });
            }
            Block::Template(_, body) => body.push((parse_body(trimmed, no)?, no)),
            Block::Inst(inst) => match keyword {
                "opcode" => inst.opcode = Some(full(after, no, ws_number)? as u16),
                "secondary" => {
                    let (v, s, m) = full(after, no, |i| {
                        let (i, v) = ws_number(i)?;
                        let (i, s) = preceded(ws_tag("shift"), ws_number).parse(i)?;
                        let (i, m) = preceded(ws_tag("mask"), ws_number).parse(i)?;
                        Ok((i, (v, s, m)))
                    })?;
                    inst.secondary = Some((v as u16, s as u8, m as u16));
                }
                "unit" => inst.unit = Some(full(after, no, preceded(space1, ident))?.to_string()),
                "about" => inst.about = Some(after.trim().to_string()),
                "use" => {
                    let name = full(after, no, preceded(space1, ident))?;
                    if inst.template.replace(name.to_string()).is_some() {
                        return Err(err("an instruction uses at most one template".into()));
                    }
                    inst.body.push((Body::Overlap("@use".into(), name.into()), no));
                }
                _ => inst.body.push((parse_body(trimmed, no)?, no)),
            },
        }
    }
    if !matches!(block, Block::None) {
        return Err(format!("{ISA_PATH}: missing `end` at the end of the file"));
    }
    // Expand templates in place of their `use` line.
    for inst in &mut isa.insts {
        let mut body = Vec::new();
        for (item, no) in std::mem::take(&mut inst.body) {
            match item {
                Body::Overlap(marker, name) if marker == "@use" => {
                    let template = isa
                        .templates
                        .get(&name)
                        .ok_or_else(|| format!("{ISA_PATH}:{no}: unknown template `{name}`"))?;
                    body.extend(template.iter().cloned());
                }
                other => body.push((other, no)),
            }
        }
        inst.body = body;
    }
    Ok(isa)
}

// ───────────────────────────── checks ─────────────────────────────

fn mask_of(r: Range) -> u64 {
    (r.0..=r.1).fold(0u64, |m, b| if b < 64 { m | (1 << b) } else { m })
}

/// Type size from the mnemonic (encoding spec §4.1.3).
fn type_size(name: &str) -> u8 {
    if name.ends_with("128") {
        128
    } else if name.ends_with("48") {
        48
    } else if name.ends_with('8') {
        8
    } else {
        let tail: String = name.chars().rev().take(2).collect::<Vec<_>>().into_iter().rev().collect();
        tail.parse().unwrap_or(32)
    }
}

struct Field {
    name: String,
    mask: u64,
    zero: bool,
}

fn fields_of(inst: &Inst) -> Vec<Field> {
    let mut fields = vec![
        Field { name: "opcode".into(), mask: mask_of((48, 56)), zero: false },
        Field { name: "fau_page".into(), mask: mask_of((57, 58)), zero: false },
        Field { name: "flow".into(), mask: mask_of((59, 62)), zero: false },
        Field { name: "reserved".into(), mask: 1 << 63, zero: true },
    ];
    if let Some((_, shift, mask)) = inst.secondary {
        fields.push(Field { name: "secondary".into(), mask: u64::from(mask) << shift, zero: false });
    }
    let mut staging = 0;
    for (item, _) in &inst.body {
        let mut push = |name: String, mask: u64, zero: bool| fields.push(Field { name, mask, zero });
        match item {
            Body::Staging { base, control, control_bits, count, .. } => {
                push(format!("staging{staging}"), mask_of(*base), false);
                push(format!("staging{staging}.control"), mask_of(*control_bits), *control == 0);
                push(format!("staging{staging}.count"), mask_of(*count), false);
                staging += 1;
            }
            Body::Dest { reg, mask } => {
                push("dest".into(), mask_of(*reg), false);
                push("dest.mask".into(), mask_of(*mask), false);
            }
            Body::Src(s) => {
                let n = s.slot;
                push(format!("src{n}"), mask_of((8 * n, 8 * n + 7)), false);
                for (what, bit) in [("neg", s.neg), ("abs", s.abs), ("not", s.not)] {
                    if let Some(bit) = bit {
                        push(format!("src{n}.{what}"), 1 << bit, false);
                    }
                }
                if let Some((r, _)) = &s.swizzle {
                    push(format!("src{n}.swizzle"), mask_of(*r), false);
                }
                if let Some((_, r, _)) = &s.widen {
                    push(format!("src{n}.widen"), mask_of(*r), false);
                }
                if let Some((r, _)) = &s.lane {
                    push(format!("src{n}.lane"), mask_of(*r), false);
                }
            }
            Body::Imm { name, range, .. } => push(name.clone(), mask_of(*range), false),
            Body::Fixed { name, range, value } => {
                // A constant: its zero bits may be shared with a declared overlap, its one bits not.
                let m = mask_of(*range);
                let ones = (value << range.0) & m;
                if ones != m {
                    push(name.clone(), m & !ones, true);
                }
                if ones != 0 {
                    push(name.clone(), ones, false);
                }
            }
            Body::Mod { key, range, .. } => push(key.clone(), mask_of(*range), false),
            Body::Overlap(..) => {}
        }
    }
    fields
}

fn check(isa: &Isa) -> Result<(), String> {
    let mut errors = Vec::new();
    if isa.immediates.len() != 32 {
        errors.push(format!("the immediate table has {} entries, expected 32", isa.immediates.len()));
    }
    let unit_names: HashSet<&str> = isa.units.iter().map(|u| u.name.as_str()).collect();
    let mut enums: HashMap<&str, &EnumDef> = HashMap::new();
    for e in &isa.enums {
        if enums.insert(&e.key, e).is_some() {
            errors.push(format!("{ISA_PATH}:{}: enum `{}` defined twice", e.line, e.key));
        }
        let mut seen = HashSet::new();
        for v in e.values.iter().flatten() {
            if !seen.insert(v) {
                errors.push(format!("{ISA_PATH}:{}: enum `{}` has `{v}` twice", e.line, e.key));
            }
        }
    }
    let unit_order: Vec<&str> = isa.units.iter().map(|u| u.name.as_str()).collect();
    if unit_order != ["FMA", "CVT", "SFU", "V", "LS", "T", "VT", "NONE"] {
        errors.push("units must be listed as FMA CVT SFU V LS T VT NONE (the order of `Unit`)".into());
    }
    if !enums.contains_key("flow") {
        errors.push("the `flow` enum is missing".into());
    }
    let mut names = HashSet::new();
    let mut idents = HashSet::new();
    for inst in &isa.insts {
        let at = format!("{ISA_PATH}:{}: {}", inst.line, inst.name);
        if !names.insert(inst.name.as_str()) {
            errors.push(format!("{at}: defined twice"));
        }
        if !idents.insert(rust_opcode_name(&inst.name)) {
            errors.push(format!("{at}: its Rust name clashes with another instruction"));
        }
        match inst.opcode {
            Some(op) if op < 0x200 => {}
            _ => errors.push(format!("{at}: needs an `opcode` below 0x200")),
        }
        match &inst.unit {
            Some(u) if unit_names.contains(u.as_str()) => {}
            _ => errors.push(format!("{at}: needs a known `unit`")),
        }
        if inst.about.as_deref().is_none_or(str::is_empty) {
            errors.push(format!("{at}: needs an `about` line"));
        }
        if let Some((value, _, mask)) = inst.secondary
            && value & !mask != 0
        {
            errors.push(format!("{at}: secondary value {value:#x} does not fit mask {mask:#x}"));
        }
        check_operands(inst, &enums, &at, &mut errors);
        check_fields(inst, &at, &mut errors);
    }
    check_ambiguity(isa, &mut errors);
    if errors.is_empty() { Ok(()) } else { Err(errors.join("\n")) }
}

fn check_operands(inst: &Inst, enums: &HashMap<&str, &EnumDef>, at: &str, errors: &mut Vec<String>) {
    let size = type_size(&inst.name);
    let mut next_slot = 0u8;
    let (mut dest, mut staging_at_40, mut placeholder) = (false, false, false);
    let enum_ref = |key: &str, no: usize, errors: &mut Vec<String>| -> Option<usize> {
        match enums.get(key) {
            Some(e) => Some(e.values.len()),
            None => {
                errors.push(format!("{ISA_PATH}:{no}: {}: unknown enum `{key}`", inst.name));
                None
            }
        }
    };
    for (item, no) in &inst.body {
        match item {
            Body::Src(s) => {
                if s.slot != next_slot {
                    errors.push(format!("{at}: source in slot {} but the slot rule gives {next_slot}", s.slot));
                }
                next_slot = s.slot + if s.size == 64 && size != 64 { 2 } else { 1 };
                let expect = |what: &str, got: &str, want: &str, errors: &mut Vec<String>| {
                    if got != want {
                        errors.push(format!("{at}: source {}: {what} must use enum `{want}`, not `{got}`", s.slot));
                    }
                };
                if let Some((_, e)) = &s.swizzle {
                    enum_ref(e, *no, errors);
                    let want = if s.size == 16 { "swizzles_16_bit" } else { "widen" };
                    expect("swizzle", e, want, errors);
                }
                if let Some((kind, r, e)) = &s.widen {
                    if let Some(n) = enum_ref(e, *no, errors)
                        && n > 1 << (r.1 - r.0 + 1)
                    {
                        errors.push(format!("{at}: enum `{e}` does not fit its field"));
                    }
                    let want = match kind {
                        WidenKind::Widen => format!("swizzles_{}_bit", s.size),
                        WidenKind::Lanes => "lanes_8_bit".into(),
                        WidenKind::HalfSwizzle => "half_swizzles_8_bit".into(),
                        WidenKind::Combine => "combine".into(),
                    };
                    expect("widen", e, &want, errors);
                }
                if let Some((_, e)) = &s.lane {
                    enum_ref(e, *no, errors);
                    expect("lane", e, &format!("lane_{}_bit", s.size), errors);
                }
            }
            Body::Dest { .. } => dest = true,
            Body::Staging { base, write, minus_one, .. } => {
                staging_at_40 |= base.0 == 40;
                if *minus_one && !write {
                    errors.push(format!("{at}: only write staging operands use a count-minus-one field"));
                }
            }
            Body::Fixed { name, range, .. } => placeholder |= name == "placeholder" && *range == (40, 47),
            Body::Mod { key, range, enum_key } => match enum_key {
                Some(e) => {
                    if let Some(n) = enum_ref(e, *no, errors)
                        && n > 1 << (range.1 - range.0 + 1)
                    {
                        errors.push(format!("{ISA_PATH}:{no}: {}: enum `{e}` does not fit `{key}`", inst.name));
                    }
                }
                None if range.0 != range.1 => {
                    errors.push(format!("{ISA_PATH}:{no}: {}: flag `{key}` is one bit", inst.name))
                }
                None => {}
            },
            _ => {}
        }
    }
    if usize::from(dest) + usize::from(staging_at_40) + usize::from(placeholder) != 1 {
        errors.push(format!("{at}: byte 5 must hold exactly one of: destination, staging register, placeholder"));
    }
}

fn check_fields(inst: &Inst, at: &str, errors: &mut Vec<String>) {
    let fields = fields_of(inst);
    let declared: Vec<(&str, &str)> = inst
        .body
        .iter()
        .filter_map(|(b, _)| match b {
            Body::Overlap(a, b) => Some((a.as_str(), b.as_str())),
            _ => None,
        })
        .collect();
    let mut used = vec![false; declared.len()];
    for (i, a) in fields.iter().enumerate() {
        if a.mask == 0 || a.mask.leading_zeros() == 0 && a.name != "reserved" {
            errors.push(format!("{at}: field `{}` lies outside bits 0..62", a.name));
        }
        for b in &fields[i + 1..] {
            let shared = a.mask & b.mask;
            if shared == 0 {
                continue;
            }
            let (an, bn) = (a.name.as_str(), b.name.as_str());
            let found = declared.iter().position(|&(x, y)| (x == an && y == bn) || (x == bn && y == an));
            match found {
                Some(k) if a.zero || b.zero => used[k] = true,
                Some(_) => errors.push(format!(
                    "{at}: declared overlap of `{an}` and `{bn}` needs one of them to be a constant zero on bits {shared:#x}"
                )),
                None => errors.push(format!("{at}: fields `{an}` and `{bn}` overlap on bits {shared:#x} (declare `overlap` if intended)")),
            }
        }
    }
    for (k, (a, b)) in declared.iter().enumerate() {
        if !used[k] {
            errors.push(format!("{at}: declared overlap `{a}` / `{b}` does not exist"));
        }
    }
}

/// Two instructions are ambiguous when their opcode and secondary-opcode bits agree on every
/// bit both of them fix (such a word would match both encodings).
fn check_ambiguity(isa: &Isa, errors: &mut Vec<String>) {
    let patterns: Vec<(u64, u64, &str)> = isa
        .insts
        .iter()
        .map(|inst| {
            let (mut mask, mut value) = (mask_of((48, 56)), u64::from(inst.opcode.unwrap_or(0)) << 48);
            if let Some((v, shift, m)) = inst.secondary {
                mask |= u64::from(m) << shift;
                value |= u64::from(v) << shift;
            }
            (mask, value, inst.name.as_str())
        })
        .collect();
    for (i, &(m1, v1, n1)) in patterns.iter().enumerate() {
        for &(m2, v2, n2) in &patterns[i + 1..] {
            if (v1 ^ v2) & m1 & m2 == 0 {
                errors.push(format!("encodings of `{n1}` and `{n2}` can match the same word"));
            }
        }
    }
}

// ───────────────────────────── code generation ─────────────────────────────

fn rust_opcode_name(name: &str) -> String {
    name.replace('.', "_").to_ascii_uppercase()
}

fn camel(text: &str) -> String {
    let mut out = String::new();
    for part in text.split(['_', '.']).filter(|p| !p.is_empty()) {
        if out.chars().last().is_some_and(|c| c.is_ascii_digit()) && part.starts_with(|c: char| c.is_ascii_digit()) {
            out.push('_');
        }
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

fn variant_name(type_name: &str, value: &str) -> String {
    let v = camel(value);
    if v.starts_with(|c: char| c.is_ascii_digit()) { format!("{}{v}", &type_name[..1]) } else { v }
}

fn generate(isa: &Isa) -> String {
    let mut o = String::new();
    let enum_index: HashMap<&str, usize> = isa.enums.iter().enumerate().map(|(i, e)| (e.key.as_str(), i)).collect();
    let enum_id = |key: &str| format!("EnumId::{}", camel(&isa.enums[enum_index[key]].key));
    let n = isa.insts.len();
    let max = |f: &dyn Fn(&Inst) -> usize| isa.insts.iter().map(f).max().unwrap_or(0);
    let count = |inst: &Inst, p: fn(&Body) -> bool| inst.body.iter().filter(|(b, _)| p(b)).count();
    let _ = writeln!(o, "// Generated by build.rs from {ISA_PATH}. Do not edit.\n");
    let _ = writeln!(o, "/// Number of instructions in the ISA description.");
    let _ = writeln!(o, "pub const INSTRUCTION_COUNT: usize = {n};");
    let _ = writeln!(o, "/// Most sources of any instruction.");
    let _ = writeln!(o, "pub const MAX_SOURCES: usize = {};", max(&|i| count(i, |b| matches!(b, Body::Src(_)))));
    let _ = writeln!(o, "/// Most staging operands of any instruction.");
    let _ =
        writeln!(o, "pub const MAX_STAGING: usize = {};", max(&|i| count(i, |b| matches!(b, Body::Staging { .. }))));
    let _ = writeln!(o, "/// Most immediate fields of any instruction.");
    let _ = writeln!(o, "pub const MAX_IMMEDIATES: usize = {};", max(&|i| count(i, |b| matches!(b, Body::Imm { .. }))));
    let _ = writeln!(o, "/// Most instruction modifiers of any instruction.");
    let _ =
        writeln!(o, "pub const MAX_MODIFIERS: usize = {};\n", max(&|i| count(i, |b| matches!(b, Body::Mod { .. }))));

    // Opcode enum.
    let _ =
        writeln!(o, "/// Every instruction of the ISA, in the order of `isa/valhall.isa` (sorted by primary opcode).");
    let _ = writeln!(o, "/// The variant name is the mnemonic in upper case with `.` replaced by `_`.");
    let _ = writeln!(o, "#[allow(non_camel_case_types, clippy::upper_case_acronyms)]");
    let _ = writeln!(
        o,
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n#[repr(u16)]\npub enum Opcode {{"
    );
    for inst in &isa.insts {
        let _ = writeln!(o, "    /// `{}`: {}", inst.name, inst.about.as_deref().unwrap_or(""));
        let _ = writeln!(o, "    {},", rust_opcode_name(&inst.name));
    }
    let _ = writeln!(o, "}}\n");
    let _ = writeln!(
        o,
        "impl Opcode {{\n    /// All opcodes, in table order (`Opcode::ALL[i] as usize == i`).\n    pub const ALL: [Opcode; {n}] = ["
    );
    for inst in &isa.insts {
        let _ = writeln!(o, "        Opcode::{},", rust_opcode_name(&inst.name));
    }
    let _ = writeln!(o, "    ];\n}}\n");

    // Enums.
    let _ = writeln!(o, "/// Identifies one enumeration of the ISA description.");
    let _ = writeln!(o, "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\npub enum EnumId {{");
    for e in &isa.enums {
        let _ = writeln!(o, "    /// `{}`: {}", e.key, e.title);
        let _ = writeln!(o, "    {},", camel(&e.key));
    }
    let _ = writeln!(o, "}}\n");
    let _ = writeln!(
        o,
        "/// The enumerations, indexed by `EnumId as usize`.\npub static ENUMS: [EnumInfo; {}] = [",
        isa.enums.len()
    );
    for e in &isa.enums {
        let values: Vec<String> = e.values.iter().map(|v| format!("{v:?}")).collect();
        let _ = writeln!(
            o,
            "    EnumInfo {{ key: {:?}, title: {:?}, values: &[{}], default: {:?} }},",
            e.key,
            e.title,
            values.join(", "),
            e.default.map(|d| d as u8)
        );
    }
    let _ = writeln!(o, "];\n");
    for e in &isa.enums {
        let ty = camel(&e.key);
        let _ =
            writeln!(o, "/// Typed values of the `{}` enum ({}). Reserved indices have no variant.", e.key, e.title);
        let derive_default = e.default.is_some();
        let _ = writeln!(
            o,
            "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash{})]\n#[repr(u8)]\npub enum {ty} {{",
            if derive_default { ", Default" } else { "" }
        );
        for (i, v) in e.values.iter().enumerate() {
            if let Some(v) = v {
                let _ = writeln!(o, "    /// `{v}`");
                if Some(i) == e.default {
                    let _ = writeln!(o, "    #[default]");
                }
                let _ = writeln!(o, "    {} = {i},", variant_name(&ty, v));
            }
        }
        let _ = writeln!(o, "}}\n");
        let _ = writeln!(o, "impl IsaEnum for {ty} {{\n    const ID: EnumId = EnumId::{ty};");
        let _ = writeln!(o, "    fn index(self) -> u8 {{\n        self as u8\n    }}");
        let _ = writeln!(o, "    fn from_index(index: u8) -> Option<Self> {{\n        match index {{");
        for (i, v) in e.values.iter().enumerate() {
            if let Some(v) = v {
                let _ = writeln!(o, "            {i} => Some({ty}::{}),", variant_name(&ty, v));
            }
        }
        let _ = writeln!(o, "            _ => None,\n        }}\n    }}\n}}\n");
    }

    // Instructions.
    let _ = writeln!(
        o,
        "/// Per-instruction information, indexed by `Opcode as usize`.\npub static INSTRUCTIONS: [InstrInfo; {n}] = ["
    );
    for inst in &isa.insts {
        let mut staging = Vec::new();
        let mut srcs = Vec::new();
        let mut imms = Vec::new();
        let mut mods = Vec::new();
        let mut overlaps = Vec::new();
        let mut dest = false;
        let mut placeholder = false;
        for (item, _) in &inst.body {
            match item {
                Body::Staging { write, base, control, control_bits, minus_one, count } => staging.push(format!(
                    "StagingInfo {{ write: {write}, base_start: {}, control: {control}, control_start: {}, count_start: {}, count_minus_one: {minus_one} }}",
                    base.0, control_bits.0, count.0
                )),
                Body::Dest { .. } => dest = true,
                Body::Src(s) => {
                    let field = |r: &Range, e: &str| format!("Some(SrcField {{ start: {}, width: {}, values: {} }})", r.0, r.1 - r.0 + 1, enum_id(e));
                    let swizzle = s.swizzle.as_ref().map_or("None".to_string(), |(r, e)| field(r, e));
                    let lane = s.lane.as_ref().map_or("None".to_string(), |(r, e)| field(r, e));
                    let (widen_kind, widen) = match &s.widen {
                        Some((k, r, e)) => (format!("{k:?}"), field(r, e)),
                        None => ("None".to_string(), "None".to_string()),
                    };
                    srcs.push(format!(
                        "SrcInfo {{ slot: {}, size: {}, float: {}, neg: {:?}, abs: {:?}, not: {:?}, swizzle: {swizzle}, widen_kind: WidenKind::{widen_kind}, widen: {widen}, lane: {lane} }}",
                        s.slot, s.size, s.float || s.neg.is_some(), s.neg, s.abs, s.not
                    ));
                }
                Body::Imm { name, range, signed } => imms.push(format!(
                    "ImmInfo {{ name: {name:?}, start: {}, width: {}, signed: {signed} }}",
                    range.0,
                    range.1 - range.0 + 1
                )),
                Body::Fixed { name, .. } => placeholder |= name == "placeholder",
                Body::Mod { key, range, enum_key } => mods.push(format!(
                    "ModInfo {{ key: {key:?}, start: {}, width: {}, kind: {} }}",
                    range.0,
                    range.1 - range.0 + 1,
                    enum_key.as_deref().map_or("ModKind::Flag".to_string(), |e| format!("ModKind::Enum({})", enum_id(e)))
                )),
                Body::Overlap(a, b) => overlaps.push(format!("({a:?}, {b:?})")),
            }
        }
        let secondary = inst.secondary.map_or("None".into(), |(v, s, m)| {
            format!("Some(Secondary {{ value: {v:#x}, shift: {s}, mask: {m:#x} }})")
        });
        let unit = match inst.unit.as_deref().unwrap_or("NONE") {
            "FMA" => "Fma",
            "CVT" => "Cvt",
            "SFU" => "Sfu",
            "V" => "V",
            "LS" => "Ls",
            "T" => "T",
            "VT" => "Vt",
            _ => "None",
        };
        let _ = writeln!(
            o,
            "    InstrInfo {{ name: {:?}, opcode: Opcode::{}, primary: {:#05x}, secondary: {secondary}, unit: Unit::{unit}, type_size: {}, about: {:?}, template: {:?}, staging: &[{}], dest: {dest}, placeholder: {placeholder}, srcs: &[{}], imms: &[{}], mods: &[{}], overlaps: &[{}] }},",
            inst.name,
            rust_opcode_name(&inst.name),
            inst.opcode.unwrap_or(0),
            type_size(&inst.name),
            inst.about.as_deref().unwrap_or(""),
            inst.template,
            staging.join(", "),
            srcs.join(", "),
            imms.join(", "),
            mods.join(", "),
            overlaps.join(", ")
        );
    }
    let _ = writeln!(o, "];\n");

    // Name index (sorted for binary search) and decode buckets.
    let mut by_name: Vec<&Inst> = isa.insts.iter().collect();
    by_name.sort_by(|a, b| a.name.cmp(&b.name));
    let _ = writeln!(
        o,
        "/// Instructions sorted by mnemonic, for binary search.\npub static BY_NAME: [(&str, Opcode); {n}] = ["
    );
    for inst in by_name {
        let _ = writeln!(o, "    ({:?}, Opcode::{}),", inst.name, rust_opcode_name(&inst.name));
    }
    let _ = writeln!(o, "];\n");
    let mut order: Vec<(u16, usize)> = isa.insts.iter().enumerate().map(|(i, x)| (x.opcode.unwrap_or(0), i)).collect();
    order.sort();
    let _ = writeln!(o, "/// Instructions sorted by primary opcode.\npub static DECODE_ORDER: [Opcode; {n}] = [");
    for &(_, i) in &order {
        let _ = writeln!(o, "    Opcode::{},", rust_opcode_name(&isa.insts[i].name));
    }
    let _ = writeln!(o, "];\n");
    let _ = writeln!(o, "/// For each primary opcode: (first index into `DECODE_ORDER`, number of instructions).");
    let _ = writeln!(o, "pub static PRIMARY_BUCKETS: [(u16, u8); 512] = [");
    for primary in 0u16..512 {
        let start = order.partition_point(|&(p, _)| p < primary);
        let len = order[start..].iter().take_while(|&&(p, _)| p == primary).count();
        let _ = writeln!(o, "    ({start}, {len}),");
    }
    let _ = writeln!(o, "];\n");

    // Immediates, specials, units.
    let _ = writeln!(o, "/// The 32 entries of the immediate table (source bytes 0xC0..0xDF), with a note each.");
    let _ = writeln!(o, "pub static IMMEDIATES: [(u32, &str); 32] = [");
    for (v, note) in &isa.immediates {
        let _ = writeln!(o, "    ({v:#010x}, {note:?}),");
    }
    let _ = writeln!(o, "];\n");
    let _ = writeln!(o, "/// Special FAU values per page and entry: (name, note); `None` = reserved.");
    let _ = writeln!(o, "pub static SPECIALS: [[Option<(&str, &str)>; 16]; 4] = [");
    for page in 0..4u8 {
        let _ = write!(o, "    [");
        for entry in 0..16u8 {
            let found = isa.specials.get(&page).and_then(|l| l.iter().find(|s| s.entry == entry));
            match found {
                Some(s) => {
                    let _ = write!(o, "Some(({:?}, {:?})), ", s.name, s.note);
                }
                None => {
                    let _ = write!(o, "None, ");
                }
            }
        }
        let _ = writeln!(o, "],");
    }
    let _ = writeln!(o, "];\n");
    let _ = writeln!(o, "/// Execution units: (name, arithmetic?, note), in `Unit` order.");
    let _ = writeln!(o, "pub static UNITS: [(&str, bool, &str); {}] = [", isa.units.len());
    for u in &isa.units {
        let _ = writeln!(o, "    ({:?}, {}, {:?}),", u.name, u.alu, u.note);
    }
    let _ = writeln!(o, "];");
    o
}
