//! Mesa's shader-db statistics of one variant (`va_print_stats` style):
//!
//! ```text
//! N inst, F cycles, F fma, F cvt, F sfu, F v, F t, F ls, N quadwords, N threads, N loops, S:F spills:fills
//! ```
//!
//! Per instruction, by the unit of its table entry: FMA, CVT and SFU count the registers the
//! instruction writes (2 for a 64-bit result, 0 for NOP/branches); V counts varying channels
//! (vector size × 2 for 32-bit register formats, × 1 for 16-bit ones); T and LS count
//! instructions; VT counts one V and one T; the fixed-function unit (ATEST, ZS_EMIT, BLEND,
//! BARRIER, tile access) counts nothing. Each unit's cycles divide by the Mali-G78 rates (FMA
//! 64, CVT 64, SFU 16, V 16, T 4, LS 1 per cycle); `cycles` is their maximum. `threads` is 2 in
//! the 32-register mode, else 1; `quadwords` is the code size without padding / 16. Floats
//! print like C's `%f`.

use crate::emit::meta::Stats;
use crate::valhall::tables::{INSTRUCTION_COUNT, ModKind, RegisterFormat};
use crate::valhall::{Instr, IsaEnum, Opcode, Unit};
use std::sync::LazyLock;

/// Raw per-unit counts of a program.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    pub fma: u32,
    pub cvt: u32,
    pub sfu: u32,
    pub v: u32,
    pub t: u32,
    pub ls: u32,
}

/// What the counts need of an opcode, looked up once per opcode rather than by modifier name
/// for every instruction.
#[derive(Clone, Copy, Debug)]
struct UnitFacts {
    unit: Unit,
    /// Registers the destination writes (0 without one, 2 for 64-bit types).
    dest_registers: u8,
    /// Number of staging operands, and which of them are written (bit k for operand k).
    staging: u8,
    staging_writes: u8,
    /// Index of the `vector_size` modifier.
    vector_size: Option<u8>,
    /// A 16-bit varying: by mnemonic (`.f16`), or by the values of the `register_format`
    /// modifier (its index, and the 16-bit formats as a bit set of indices).
    half: bool,
    register_format: Option<(u8, u16)>,
}

fn unit_facts(op: Opcode) -> &'static UnitFacts {
    static FACTS: LazyLock<Box<[UnitFacts; INSTRUCTION_COUNT]>> = LazyLock::new(|| {
        let half_formats = (0..16u8)
            .filter(|&v| RegisterFormat::from_index(v).is_some_and(|f| matches!(f.name(), "f16" | "s16" | "u16")))
            .fold(0u16, |m, v| m | 1 << v);
        let facts = |op: Opcode| {
            let info = op.info();
            let register_format = info
                .mods
                .iter()
                .position(|m| m.key == "register_format" && m.kind == ModKind::Enum(RegisterFormat::ID));
            UnitFacts {
                unit: info.unit,
                dest_registers: info.dest_registers(),
                staging: info.staging.len() as u8,
                staging_writes: info.written_staging(),
                vector_size: info.mod_index("vector_size").map(|k| k as u8),
                half: info.name.ends_with(".f16"),
                register_format: register_format.map(|k| (k as u8, half_formats)),
            }
        };
        let mut table = Box::new([facts(Opcode::NOP); INSTRUCTION_COUNT]);
        for op in Opcode::ALL {
            table[op as usize] = facts(op);
        }
        table
    });
    &FACTS[op as usize]
}

fn written_registers(i: &Instr, f: &UnitFacts) -> u32 {
    if f.dest_registers > 0 {
        return f.dest_registers.into();
    }
    let groups = i.staging[..usize::from(f.staging)].iter().enumerate();
    groups.filter(|(k, _)| f.staging_writes >> k & 1 != 0).map(|(_, g)| u32::from(g.count)).sum()
}

fn varying_channels(i: &Instr, f: &UnitFacts) -> u32 {
    let size = f.vector_size.map_or(1, |k| u32::from(i.mods[usize::from(k)]) + 1);
    let half = f.half
        || f.register_format.is_some_and(|(k, half)| {
            let v = i.mods[usize::from(k)];
            v < 16 && half >> v & 1 != 0
        });
    size * if half { 1 } else { 2 }
}

impl Counts {
    /// Counts the units of one instruction.
    #[inline]
    pub fn add(&mut self, i: &Instr) {
        let f = unit_facts(i.opcode);
        match f.unit {
            Unit::Fma => self.fma += written_registers(i, f),
            Unit::Cvt => self.cvt += written_registers(i, f),
            Unit::Sfu => self.sfu += written_registers(i, f),
            Unit::V => self.v += varying_channels(i, f),
            Unit::T => self.t += 1,
            Unit::Ls => self.ls += 1,
            Unit::Vt => {
                self.v += 1;
                self.t += 1;
            }
            Unit::None => {}
        }
    }
}

/// The statistics of a variant.
pub fn stats(
    counts: Counts,
    instructions: u32,
    code_size: u32,
    work_registers: u32,
    loops: u32,
    spills: u32,
    fills: u32,
) -> Stats {
    let fma = counts.fma as f32 / 64.0;
    let cvt = counts.cvt as f32 / 64.0;
    let sfu = counts.sfu as f32 / 16.0;
    let v = counts.v as f32 / 16.0;
    let t = counts.t as f32 / 4.0;
    let ls = counts.ls as f32;
    let cycles = fma.max(cvt).max(sfu).max(v).max(t).max(ls);
    Stats {
        instructions,
        cycles,
        fma,
        cvt,
        sfu,
        v,
        t,
        ls,
        quadwords: code_size / 16,
        threads: if work_registers <= 32 { 2 } else { 1 },
        loops,
        spills,
        fills,
    }
}

/// The shader-db line.
pub fn line(s: &Stats) -> String {
    format!(
        "{} inst, {:.6} cycles, {:.6} fma, {:.6} cvt, {:.6} sfu, {:.6} v, {:.6} t, {:.6} ls, {} quadwords, {} threads, {} loops, {}:{} spills:fills",
        s.instructions,
        f64::from(s.cycles),
        f64::from(s.fma),
        f64::from(s.cvt),
        f64::from(s.sfu),
        f64::from(s.v),
        f64::from(s.t),
        f64::from(s.ls),
        s.quadwords,
        s.threads,
        s.loops,
        s.spills,
        s.fills
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::valhall::parse_line;

    #[test]
    fn units_and_line() {
        let prog = [
            "FADD.f32 r0, r1, r2",
            "IADD_IMM.i32 r1, 0x0, #0x5",
            "FRCP.f32 r2, r2",
            "LD_VAR_BUF_IMM.f32.slot0.v4.src_f32.center.store @r4:r5:r6:r7, r61, index:0x0",
            "TEX_FETCH.slot1.f.32.2d @r0:r1:r2:r3, @r4:r5, u0",
            "STORE.i32.slot2 @r0, r2, offset:0",
            "NOP.end ",
        ];
        let instrs: Vec<Instr> = prog.iter().map(|l| parse_line(l).unwrap()).collect();
        let mut c = Counts::default();
        instrs.iter().for_each(|i| c.add(i));
        assert_eq!(c, Counts { fma: 1, cvt: 1, sfu: 1, v: 8, t: 1, ls: 1 });
        let s = stats(c, 7, 56, 32, 0, 0, 0);
        assert_eq!(
            line(&s),
            "7 inst, 1.000000 cycles, 0.015625 fma, 0.015625 cvt, 0.062500 sfu, 0.500000 v, 0.250000 t, 1.000000 ls, 3 quadwords, 2 threads, 0 loops, 0:0 spills:fills"
        );
    }
}
