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
use crate::valhall::{Instr, Unit};

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

fn written_registers(i: &Instr) -> u32 {
    match i.destination() {
        Some(_) if i.info().type_size == 64 => 2,
        Some(_) => 1,
        None => i
            .info()
            .staging
            .iter()
            .zip(i.staging_operands())
            .filter(|(s, _)| s.write)
            .map(|(_, g)| u32::from(g.count))
            .sum(),
    }
}

fn varying_channels(i: &Instr) -> u32 {
    let size = match i.modifier("vector_size") {
        Some(k) => u32::from(k) + 1,
        None => 1,
    };
    let half = i.info().name.ends_with(".f16")
        || matches!(i.register_format().map(crate::valhall::IsaEnum::name), Some("f16" | "s16" | "u16"));
    size * if half { 1 } else { 2 }
}

/// Counts the units of a program.
pub fn count<'a>(instrs: impl IntoIterator<Item = &'a Instr>) -> Counts {
    let mut c = Counts::default();
    for i in instrs {
        match i.unit() {
            Unit::Fma => c.fma += written_registers(i),
            Unit::Cvt => c.cvt += written_registers(i),
            Unit::Sfu => c.sfu += written_registers(i),
            Unit::V => c.v += varying_channels(i),
            Unit::T => c.t += 1,
            Unit::Ls => c.ls += 1,
            Unit::Vt => {
                c.v += 1;
                c.t += 1;
            }
            Unit::None => {}
        }
    }
    c
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
        let c = count(&instrs);
        assert_eq!(c, Counts { fma: 1, cvt: 1, sfu: 1, v: 8, t: 1, ls: 1 });
        let s = stats(c, 7, 56, 32, 0, 0, 0);
        assert_eq!(
            line(&s),
            "7 inst, 1.000000 cycles, 0.015625 fma, 0.015625 cvt, 0.062500 sfu, 0.500000 v, 0.250000 t, 1.000000 ls, 3 quadwords, 2 threads, 0 loops, 0:0 spills:fills"
        );
    }
}
