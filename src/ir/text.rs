//! The IR as text: a printer and a parser, so tests can build IR from text and start anywhere in
//! the pipeline. `parse(print(s))` reproduces `s` (up to dead instructions and value numbers
//! nobody uses).
//!
//! ```text
//! fragment shader
//! block0:
//!     %0 = preload r60
//!     %1 = FADD.f32.clamp_0_1 %0, #0x3F800000.neg
//!     %2, %3 = LD_VAR_BUF_IMM.f32.slot0.v2.src_f32.center.store %4, index:0x0
//!     STORE.i32.slot1 @%1, %2:%3, offset:0
//!     branch.z %1, block2, block1
//! block1:                    ; preds: block0
//!     %5 = phi [%1, block0], [%6, block2]
//!     jump block2
//! ```
//!
//! Machine instructions use Mesa's assembly syntax with these substitutions: the values defined
//! (destination, then written staging registers) stand on the left of `=`; `%N` is a value,
//! `%N:%M` a 64-bit pair, `#0x…` in a source position an IR constant (before legalisation),
//! `@%a:%b` a read staging vector. Pseudo-instructions are `phi`, `copy`, `pcopy`, `undef` and
//! `preload rN`; terminators are `jump`, `branch.z` / `branch.nz` (branch when the condition is
//! zero / non-zero) and `end`.

use super::{Block, Inst, InstKind, MachOp, Operand, Shader, Src, Stage, Terminator, Value, ValueList};
use crate::valhall::disasm::{write_base, write_imm, write_mnemonic, write_src_suffixes};
use crate::valhall::{Base, Special, asm};
use std::fmt::Write;

/// Prints a shader.
pub fn print(shader: &Shader) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} shader", shader.stage.name());
    for (b, block) in shader.blocks.iter().enumerate() {
        let label = format!("block{b}:");
        if block.preds.is_empty() {
            let _ = writeln!(out, "{label}");
        } else {
            let preds: Vec<String> = block.preds.iter().map(|p| p.to_string()).collect();
            let _ = writeln!(out, "{label:<27}; preds: {}", preds.join(", "));
        }
        for id in shader.block_insts(Block(b as u32)) {
            out.push_str("    ");
            write_inst(&mut out, shader, Block(b as u32), shader.inst(id));
            out.push('\n');
        }
        out.push_str("    ");
        match block.term {
            Terminator::Jump(target) => {
                let _ = write!(out, "jump {target}");
            }
            Terminator::Branch { cond, if_zero, taken, fallthrough } => {
                let _ = write!(out, "branch.{} {cond}, {taken}, {fallthrough}", if if_zero { "z" } else { "nz" });
            }
            Terminator::End => out.push_str("end"),
        }
        out.push('\n');
    }
    out
}

fn write_list(out: &mut String, values: &[Value], sep: &str) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        let _ = write!(out, "{v}");
    }
}

/// Appends one instruction (without indentation or newline).
pub fn write_inst(out: &mut String, shader: &Shader, block: Block, inst: &Inst) {
    let mut defs = Vec::new();
    shader.for_each_def(inst, |v| defs.push(v));
    if !defs.is_empty() {
        write_list(out, &defs, ", ");
        out.push_str(" = ");
    }
    match inst.kind {
        InstKind::Phi => {
            out.push_str("phi ");
            let preds = &shader.block(block).preds;
            for (i, v) in shader.get(inst.args).iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match preds.get(i) {
                    Some(p) => {
                        let _ = write!(out, "[{v}, {p}]");
                    }
                    None => {
                        let _ = write!(out, "[{v}, ?]");
                    }
                }
            }
        }
        InstKind::Copy => {
            out.push_str("copy ");
            write_operand(out, inst.srcs[0].operand);
        }
        InstKind::ParallelCopy => {
            out.push_str("pcopy ");
            write_list(out, shader.get(inst.args), ", ");
        }
        InstKind::Undef => out.push_str("undef"),
        InstKind::Preload(r) => {
            let _ = write!(out, "preload r{r}");
        }
        InstKind::Machine => {
            let info = inst.mach.info();
            let mach = inst.mach.instr();
            write_mnemonic(out, &mach);
            let mut items: Vec<String> = Vec::new();
            for (k, s) in info.staging.iter().enumerate() {
                if !s.write {
                    let mut text = String::from("@");
                    write_list(&mut text, shader.get(inst.staging[k]), ":");
                    items.push(text);
                }
            }
            for (k, s) in info.srcs.iter().enumerate() {
                let mut text = String::new();
                write_operand(&mut text, inst.srcs[k].operand);
                write_src_suffixes(&mut text, &inst.srcs[k].to_machine(Base::Register(0)), s);
                items.push(text);
            }
            for k in 0..info.imms.len() {
                let mut text = String::new();
                write_imm(&mut text, &mach, k);
                items.push(text);
            }
            if !items.is_empty() {
                out.push(' ');
                out.push_str(&items.join(", "));
            }
        }
    }
}

fn write_operand(out: &mut String, operand: Operand) {
    match operand {
        Operand::None => out.push('_'),
        Operand::Value(v) => {
            let _ = write!(out, "{v}");
        }
        Operand::Pair(lo, hi) => {
            let _ = write!(out, "{lo}:{hi}");
        }
        Operand::Const(c) => {
            let _ = write!(out, "#0x{c:X}");
        }
        Operand::Uniform(u) => write_base(out, Base::Uniform(u)),
        Operand::Special(s) => write_base(out, Base::Special(s)),
    }
}

/// A parse error: line number (1-based) and message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

/// Parses the text form of a shader.
pub fn parse(text: &str) -> Result<Shader, ParseError> {
    Parser::new(text).run()
}

struct PendingPhi {
    inst: super::InstId,
    args: Vec<(Value, Block)>,
    line: usize,
}

struct Parser<'a> {
    lines: Vec<(usize, &'a str)>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.split(';').next().unwrap_or("").trim()))
            .filter(|(_, l)| !l.is_empty())
            .collect();
        Parser { lines }
    }

    fn run(self) -> Result<Shader, ParseError> {
        let err = |line, message: String| ParseError { line, message };
        let Some(&(first_line, header)) = self.lines.first() else {
            return Err(err(1, "empty input: expected `<stage> shader`".into()));
        };
        let stage = match header {
            "vertex shader" => Stage::Vertex,
            "fragment shader" => Stage::Fragment,
            "compute shader" => Stage::Compute,
            _ => return Err(err(first_line, format!("expected `vertex|fragment|compute shader`, found `{header}`"))),
        };
        let mut shader = Shader::new(stage);
        let block_count = self.lines.iter().filter(|(_, l)| l.ends_with(':')).count();
        if block_count == 0 {
            return Err(err(first_line, "no blocks".into()));
        }
        for _ in 1..block_count {
            shader.add_block();
        }
        let mut current: Option<Block> = None;
        let mut next_block = 0u32;
        let mut terminators: Vec<(Block, Terminator)> = Vec::new();
        let mut terminated = false;
        let mut phis: Vec<PendingPhi> = Vec::new();
        for &(line, text) in &self.lines[1..] {
            if let Some(label) = text.strip_suffix(':') {
                let b = parse_block(label).ok_or_else(|| err(line, format!("bad block label `{label}`")))?;
                if b.0 != next_block {
                    return Err(err(line, format!("expected block{next_block}, found {label}")));
                }
                if current.is_some() && !terminated {
                    return Err(err(line, "the previous block has no terminator".into()));
                }
                next_block += 1;
                current = Some(b);
                terminated = false;
                continue;
            }
            let block = current.ok_or_else(|| err(line, "instruction outside a block".into()))?;
            if terminated {
                return Err(err(line, "instruction after the terminator".into()));
            }
            if let Some(term) = parse_terminator(text, &mut shader).map_err(|m| err(line, m))? {
                terminators.push((block, term));
                terminated = true;
                continue;
            }
            let (defs, rhs) = match text.split_once(" = ") {
                Some((lhs, rhs)) => {
                    let defs = lhs
                        .split(',')
                        .map(|d| parse_value(d.trim(), &mut shader))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| err(line, format!("bad definitions `{lhs}`")))?;
                    (defs, rhs.trim())
                }
                None => (Vec::new(), text),
            };
            let inst = parse_inst(&defs, rhs, &mut shader, &mut phis, line).map_err(|m| err(line, m))?;
            let id = shader.push(block, inst.0);
            if let Some(args) = inst.1 {
                phis.push(PendingPhi { inst: id, args, line });
            }
        }
        if !terminated {
            return Err(err(self.lines.last().map_or(1, |l| l.0), "the last block has no terminator".into()));
        }
        for (b, term) in terminators {
            shader.set_terminator(b, term);
        }
        for phi in phis {
            let block = (0..shader.blocks.len())
                .find(|&b| shader.blocks[b].insts.contains(&phi.inst))
                .map(|b| Block(b as u32))
                .ok_or_else(|| err(phi.line, "φ outside a block".into()))?;
            let preds = shader.block(block).preds.clone();
            if preds.len() != phi.args.len() {
                return Err(err(
                    phi.line,
                    format!("φ has {} arguments, the block {} predecessors", phi.args.len(), preds.len()),
                ));
            }
            let mut ordered = Vec::with_capacity(preds.len());
            for p in &preds {
                let arg = phi
                    .args
                    .iter()
                    .find(|(_, b)| b == p)
                    .ok_or_else(|| err(phi.line, format!("no φ argument for {p}")))?;
                ordered.push(arg.0);
            }
            let list = shader.list(&ordered);
            shader.inst_mut(phi.inst).args = list;
        }
        Ok(shader)
    }
}

fn parse_block(text: &str) -> Option<Block> {
    text.strip_prefix("block")?.parse().ok().map(Block)
}

/// Parses `%N`, growing the value table as needed.
fn parse_value(text: &str, shader: &mut Shader) -> Option<Value> {
    let n: u32 = text.strip_prefix('%')?.parse().ok()?;
    while shader.values.len() <= n as usize {
        shader.new_value();
    }
    Some(Value(n))
}

fn parse_terminator(text: &str, shader: &mut Shader) -> Result<Option<Terminator>, String> {
    if text == "end" {
        return Ok(Some(Terminator::End));
    }
    if let Some(target) = text.strip_prefix("jump ") {
        return parse_block(target.trim()).map(|b| Some(Terminator::Jump(b))).ok_or(format!("bad block `{target}`"));
    }
    let (if_zero, rest) = match (text.strip_prefix("branch.z "), text.strip_prefix("branch.nz ")) {
        (Some(rest), _) => (true, rest),
        (_, Some(rest)) => (false, rest),
        _ => return Ok(None),
    };
    let parts: Vec<&str> = rest.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(format!("`branch` takes a condition and two blocks, found `{rest}`"));
    }
    let cond = parse_value(parts[0], shader).ok_or(format!("bad condition `{}`", parts[0]))?;
    let taken = parse_block(parts[1]).ok_or(format!("bad block `{}`", parts[1]))?;
    let fallthrough = parse_block(parts[2]).ok_or(format!("bad block `{}`", parts[2]))?;
    Ok(Some(Terminator::Branch { cond, if_zero, taken, fallthrough }))
}

type ParsedInst = (Inst, Option<Vec<(Value, Block)>>);

fn parse_inst(
    defs: &[Value],
    rhs: &str,
    shader: &mut Shader,
    _phis: &mut [PendingPhi],
    _line: usize,
) -> Result<ParsedInst, String> {
    let (head, rest) = rhs.split_once(' ').unwrap_or((rhs, ""));
    match head {
        "phi" => {
            let dests = one_def(defs, shader, "phi")?;
            let mut args = Vec::new();
            for item in split_items(rest) {
                let inner = item
                    .strip_prefix('[')
                    .and_then(|i| i.strip_suffix(']'))
                    .ok_or(format!("bad φ argument `{item}`"))?;
                let (v, b) = inner.split_once(',').ok_or(format!("bad φ argument `{item}`"))?;
                let v = parse_value(v.trim(), shader).ok_or(format!("bad value `{v}`"))?;
                let b = parse_block(b.trim()).ok_or(format!("bad block `{b}`"))?;
                args.push((v, b));
            }
            let mut inst = Inst::pseudo(InstKind::Phi);
            inst.dests = dests;
            Ok((inst, Some(args)))
        }
        "copy" => {
            let dests = one_def(defs, shader, "copy")?;
            let mut inst = Inst::pseudo(InstKind::Copy);
            inst.dests = dests;
            let (operand, _) = parse_operand(rest.trim(), shader)?;
            inst.srcs[0] = Src::new(operand);
            Ok((inst, None))
        }
        "pcopy" => {
            let args = split_items(rest)
                .map(|a| parse_value(a, shader).ok_or(format!("bad value `{a}`")))
                .collect::<Result<Vec<_>, _>>()?;
            if args.len() != defs.len() {
                return Err("`pcopy` needs as many sources as definitions".into());
            }
            let mut inst = Inst::pseudo(InstKind::ParallelCopy);
            inst.dests = shader.list(defs);
            inst.args = shader.list(&args);
            Ok((inst, None))
        }
        "undef" => {
            let mut inst = Inst::pseudo(InstKind::Undef);
            inst.dests = one_def(defs, shader, "undef")?;
            Ok((inst, None))
        }
        "preload" => {
            let reg: u8 = rest
                .trim()
                .strip_prefix('r')
                .and_then(|r| r.parse().ok())
                .filter(|&r| r < 64)
                .ok_or(format!("bad register `{rest}`"))?;
            let mut inst = Inst::pseudo(InstKind::Preload(reg));
            inst.dests = one_def(defs, shader, "preload")?;
            Ok((inst, None))
        }
        _ => parse_machine(defs, head, rest, shader).map(|inst| (inst, None)),
    }
}

fn one_def(defs: &[Value], shader: &mut Shader, kind: &str) -> Result<ValueList, String> {
    match defs {
        [_] => Ok(shader.list(defs)),
        _ => Err(format!("`{kind}` defines exactly one value")),
    }
}

/// Splits operands at top-level commas (commas inside `[…]` belong to φ arguments).
fn split_items(text: &str) -> impl Iterator<Item = &str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(text[start..].trim());
    items.into_iter().filter(|s| !s.is_empty())
}

/// Parses an operand base and returns it with the remaining suffix text (starting at `.`).
fn parse_operand<'t>(text: &'t str, shader: &mut Shader) -> Result<(Operand, &'t str), String> {
    let end = text.find('.').unwrap_or(text.len());
    let (base, suffix) = text.split_at(end);
    if base == "_" {
        return Ok((Operand::None, suffix));
    }
    if let Some(hex) = base.strip_prefix("#0x") {
        let c = u32::from_str_radix(hex, 16).map_err(|_| format!("bad constant `{base}`"))?;
        return Ok((Operand::Const(c), suffix));
    }
    if base.starts_with('%') {
        return match base.split_once(':') {
            Some((lo, hi)) => {
                let lo = parse_value(lo, shader).ok_or(format!("bad value `{lo}`"))?;
                let hi = parse_value(hi, shader).ok_or(format!("bad value `{hi}`"))?;
                Ok((Operand::Pair(lo, hi), suffix))
            }
            None => Ok((Operand::Value(parse_value(base, shader).ok_or(format!("bad value `{base}`"))?), suffix)),
        };
    }
    if let Some(n) = base.strip_prefix('u').and_then(|n| n.parse::<u8>().ok()) {
        return Ok((Operand::Uniform(n), suffix));
    }
    // A special value keeps its word suffix: `lane_id.w1`.
    let high = suffix.starts_with(".w1");
    let word_len = if suffix.starts_with(".w0") || high { 3 } else { 0 };
    let special = Special::named(base, high).ok_or(format!("unknown operand `{text}`"))?;
    Ok((Operand::Special(special), &suffix[word_len..]))
}

/// Parses a machine instruction by handing the assembler a copy of the line in which every IR
/// operand is replaced by a placeholder register, then putting the IR operands back.
fn parse_machine(defs: &[Value], head: &str, rest: &str, shader: &mut Shader) -> Result<Inst, String> {
    let name_end = head.find('.').unwrap_or(head.len());
    let opcode = (name_end..=head.len())
        .rev()
        .filter(|&i| head.is_char_boundary(i))
        .find_map(|i| crate::valhall::Opcode::from_name(&head[..i]))
        .ok_or(format!("unknown instruction `{head}`"))?;
    let info = opcode.info();
    let mut items = split_items(rest);
    let mut placeholder: Vec<String> = Vec::new();
    let dest_width = usize::from(info.dest_registers());
    if defs.len() < dest_width {
        return Err(format!("{} defines {dest_width} value(s)", info.name));
    }
    let mut inst = Inst::machine(crate::valhall::Instr::new(opcode));
    inst.dests = shader.list(&defs[..dest_width]);
    if info.dest {
        placeholder.push("r0".into());
    }
    let written = &defs[dest_width..];
    for (k, s) in info.staging.iter().enumerate() {
        let values: Vec<Value> = if s.write {
            written.to_vec()
        } else {
            let item = items.next().ok_or("missing staging operand")?;
            let body = item.strip_prefix('@').ok_or(format!("expected a staging vector `@%a:%b`, found `{item}`"))?;
            body.split(':')
                .filter(|v| !v.is_empty())
                .map(|v| parse_value(v, shader).ok_or(format!("bad value `{v}`")))
                .collect::<Result<_, _>>()?
        };
        let regs: Vec<String> = (0..values.len()).map(|i| format!("r{i}")).collect();
        placeholder.push(format!("@{}", regs.join(":")));
        inst.staging[k] = shader.list(&values);
    }
    if !info.staging.iter().any(|s| s.write) && !written.is_empty() {
        return Err(format!("{} defines {dest_width} value(s), found {}", info.name, defs.len()));
    }
    let mut operands = [Operand::None; 4];
    for (k, _) in info.srcs.iter().enumerate() {
        let item = items.next().ok_or(format!("{} has {} sources", info.name, info.srcs.len()))?;
        let (operand, suffix) = parse_operand(item, shader)?;
        operands[k] = operand;
        let base = match operand {
            Operand::Special(s) => {
                let mut b = String::new();
                write_base(&mut b, Base::Special(s));
                b
            }
            _ => "r0".into(),
        };
        placeholder.push(format!("{base}{suffix}"));
    }
    placeholder.extend(items.map(str::to_string));
    let line = format!("{head} {}", placeholder.join(", "));
    let mach = asm::parse_line(&line).map_err(|e| e.to_string())?;
    let mut inst = Inst { mach: MachOp::of(&mach), ..inst };
    for (k, operand) in operands.iter().enumerate().take(info.srcs.len()) {
        inst.srcs[k] = Src::from_machine(*operand, &mach.srcs[k]);
    }
    Ok(inst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::Builder;
    use crate::valhall::Opcode;
    use crate::valhall::tables::{Condition, ResultType};

    const SAMPLE: &str = "\
fragment shader
block0:
    %0 = preload r61
    %1, %2 = LD_VAR_BUF_IMM.f32.slot0.v2.src_f32.center.store %0, index:0x0
    %3 = FADD.f32.clamp_0_1 %1, #0x3F800000.neg
    %4 = FCMP_OR.f32.lt.m1 %3, %2.abs, #0x0
    %5 = copy #0x40490FDB
    STORE.i32.slot1 @%3, %6:%7, offset:16
    branch.z %4, block2, block1
block1:                    ; preds: block0
    %8 = LSHIFT_OR.i32 %5, #0x0.b00, %3.not
    jump block2
block2:                    ; preds: block0, block1
    %9 = phi [%3, block0], [%8, block1]
    %10 = IADD_IMM.i32 %9, #0xFFFFFFFF
    %11, %12 = pcopy %10, %9
    %13 = undef
    end
";

    #[test]
    fn round_trip() {
        let shader = parse(SAMPLE).unwrap();
        assert_eq!(print(&shader), SAMPLE);
        let again = parse(&print(&shader)).unwrap();
        assert_eq!(again, shader);
    }

    #[test]
    fn parsed_fields() {
        let s = parse(SAMPLE).unwrap();
        let fadd = s.inst(s.values[3].def.unwrap());
        assert_eq!(fadd.mach.opcode, Opcode::FADD_F32);
        assert!(fadd.srcs[1].neg);
        assert_eq!(fadd.srcs[1].operand, Operand::Const(0x3F80_0000));
        let ld = s.inst(s.values[1].def.unwrap());
        assert_eq!(s.get(ld.staging[0]), &[Value(1), Value(2)]);
        let store = s.inst(s.blocks[0].insts[5]);
        assert_eq!(store.srcs[0].operand, Operand::Pair(Value(6), Value(7)));
        assert_eq!(store.mach.imm("offset"), Some(16));
        let phi = s.inst(s.values[9].def.unwrap());
        assert_eq!(s.get(phi.args), &[Value(3), Value(8)]);
        assert_eq!(s.blocks[2].preds, vec![Block(0), Block(1)]);
    }

    #[test]
    fn builder_output_prints() {
        let mut s = Shader::new(Stage::Compute);
        let mut b = Builder::new(&mut s, Block(0));
        let x = b.preload(55);
        let y = b.fmul(x, Src::f32(2.0));
        let c = b.fcmp(Condition::Ge, y, Src::konst(0), ResultType::F1);
        let _ = b.select(c, y, x);
        let text = print(&s);
        assert_eq!(
            text,
            "\
compute shader
block0:
    %0 = preload r55
    %1 = FMA.f32 %0, #0x40000000, #0x80000000
    %2 = FCMP_OR.f32.ge.f1 %1, #0x0, #0x0
    %3 = CSEL.u32.eq %2, #0x0, %0, %1
    end
"
        );
        assert_eq!(parse(&text).unwrap(), s);
    }

    #[test]
    fn errors_have_lines() {
        let e = parse("fragment shader\nblock0:\n    %1 = FOO %2\n    end\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("fragment shader\nblock0:\n    %1 = FADD.f32 %2\n    end\n").unwrap_err();
        assert!(e.message.contains("sources"), "{e}");
        let e = parse("fragment shader\nblock0:\n    %1 = copy %0\n").unwrap_err();
        assert!(e.message.contains("terminator"), "{e}");
    }
}
